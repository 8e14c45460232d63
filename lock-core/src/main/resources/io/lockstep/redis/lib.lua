-- The library of the lock scripts, prepended to each of them (see ScriptTexts): reply codes,
-- the server clock, the fencing counter, the values a key holds and its waiter queue.
--
-- An exclusive holder's key holds "<owner>:<fence>:<cap>" (with a lock delay
-- "<owner>:<fence>:<cap>:<delay>:<lease end>", see exclusiveDelay). A key held by readers or
-- permit holders holds
--   "<kind>|<owner>,<fence>,<expires>,<cap>|<owner>,<fence>,<expires>,<cap>..."
-- where <kind> is "r" (readers) or "s<n>" (a semaphore of n permits), <expires> is the server
-- time (ms) at which that holder's lease ends (0: with the key's own TTL, for the first holder
-- until another one joins) and <cap> its max-hold cap (0: none); a holder with a lock delay has
-- ",<delay>" (ms) after its cap. The key's TTL is the latest <expires> (plus its holder's
-- delay): a holder whose process died frees its share when its own lease ends, or its delay
-- after (it is dropped by the next script that reads the holders), and the key expires with the
-- last. Either value ends in ":w" while someone waits for the key (markWaited): its release then
-- tells the waiters, or hands the key to the first of them (lib-release.lua).

-- The first element of an acquire script's reply (LockScripts names them alike).
local ACQUIRED = 1
local HELD = 0
local NO_PERSISTENCE = -1
local OTHER_KIND = -2

local millis = nil

-- The server time in ms, read once per run (TIME): every step of a script sees one moment.
local function serverMillis()
  if not millis then
    local time = redis.call('TIME')
    millis = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return millis
end

-- The next fencing token from a key's counter (INCR; it never expires), strictly increasing
-- for every key the counter serves. A counter that is missing (a new Redis, or one restarted
-- without persistence) starts again at the server time in microseconds: above every token
-- issued before, as long as fewer than a million were issued per second since it last started
-- (and at or above a start in ms x 1000, the form earlier versions also used).
local function nextFence(counter)
  local fence = redis.call('INCR', counter)
  if fence == 1 then
    local time = redis.call('TIME')
    fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
    redis.call('SET', counter, string.format('%.0f', fence))
  end
  return fence
end

-- Whether a value ("<owner>:...", or a writer's mark "<owner>:<expires>") is this owner's; a
-- token that is a prefix of the owner's is not the owner.
local function ownedBy(value, owner)
  return string.sub(value, 1, #owner + 1) == owner .. ':'
end

local function isShared(value)
  return string.find(value, '|', 1, true) ~= nil
end

-- The kind of a key held by readers or permit holders ("r", "s<n>"), or nil.
local function sharedKind(value)
  return isShared(value) and string.match(value, '^([^|]*)') or nil
end

local function holdsShare(value, owner)
  return string.find(value, '|' .. owner .. ',', 1, true) ~= nil
end

local function isWaited(value)
  return string.sub(value, -2) == ':w'
end

-- Marks a key as waited for (":w", its TTL kept): its release publishes a notification.
local function markWaited(key, value)
  if not isWaited(value) then
    redis.call('SET', key, value .. ':w', 'KEEPTTL')
  end
end

-- How many holders a kind admits ("r": any number), as the scripts report it: 0 for readers,
-- n for a semaphore of n permits.
local function permitsOf(kind)
  if kind == 'r' then
    return 0
  end
  return tonumber(string.sub(kind, 2))
end

-- kind, holders ({owner, fence, expires, cap, delay} each), waited
local function parseShared(value)
  local waited = isWaited(value)
  if waited then
    value = string.sub(value, 1, -3)
  end
  local holders = {}
  for part in string.gmatch(value, '|([^|]+)') do
    local owner, fence, expires, cap, delay = string.match(part, '^([^,]+),(%d+),(%d+),(%d+),?(%d*)$')
    if owner then
      holders[#holders + 1] = {owner, tonumber(fence), tonumber(expires), tonumber(cap), tonumber(delay) or 0}
    end
  end
  return string.match(value, '^([^|]*)'), holders, waited
end

local function formatShared(kind, holders, waited)
  local parts = {kind}
  for _, h in ipairs(holders) do
    local part = h[1] .. ',' .. string.format('%.0f', h[2]) .. ',' .. string.format('%.0f', h[3]) .. ','
      .. string.format('%.0f', h[4])
    if (h[5] or 0) > 0 then
      part = part .. ',' .. string.format('%.0f', h[5])
    end
    parts[#parts + 1] = part
  end
  local value = table.concat(parts, '|')
  if waited then
    value = value .. ':w'
  end
  return value
end

-- The holders whose lease, or lock delay after it, has not ended (an expiry of 0 becomes the
-- key's, less the holder's delay), and the latest moment the key must live until for them.
-- A holder in its delay still counts (a writer waits for it, a permit stays taken), but no
-- longer holds its share (see holderLasts).
local function liveHolders(key, holders, now)
  local ttl = nil
  local live = {}
  local latest = 0
  for _, h in ipairs(holders) do
    h[5] = h[5] or 0
    if h[3] == 0 then
      if not ttl then
        ttl = redis.call('PTTL', key)
      end
      h[3] = now + math.max(ttl, 0) - h[5]
    end
    if h[3] + h[5] > now then
      live[#live + 1] = h
      latest = math.max(latest, h[3] + h[5])
    end
  end
  return live, latest
end

-- Whether a holder's own lease lasts (not ended, nor in its lock delay); for holders that
-- liveHolders returned (an expiry of 0 resolved).
local function holderLasts(h, now)
  return h[3] > now
end

-- Writes the holders back, the key living until the latest of their leases.
local function storeShared(key, kind, holders, waited, latest, now)
  redis.call('SET', key, formatShared(kind, holders, waited), 'PX', math.max(1, latest - now))
end

-- The holder entry of an owner, or nil.
local function holderOf(holders, owner)
  for _, h in ipairs(holders) do
    if h[1] == owner then
      return h
    end
  end
  return nil
end

-- The owner's entry among a shared value's holders, nil when it has none or is in its lock
-- delay (its lease ended).
local function heldShare(key, value, owner)
  local _, holders = parseShared(value)
  local mine = holderOf(holders, owner)
  if mine and mine[5] > 0 then
    mine = holderOf(liveHolders(key, holders, serverMillis()), owner)
    mine = (mine and holderLasts(mine, serverMillis())) and mine or nil
  end
  return mine
end

-- Lock delay (lockstep.lock-delay) of an exclusive holder: its value is
-- "<owner>:<fence>:<cap>:<delay>:<lease end>" (":w" appended as ever), and the key lives <delay>
-- ms past <lease end> (server ms), so that a lease that ends without a release leaves the key
-- unavailable that long; from <lease end> on, the owner no longer holds it (renewals and checks
-- find it lost). Returns the delay and the lease end, or nil for a value without a delay.
local function exclusiveDelay(value)
  local d, e = string.match(value, '^[^:|]*:%d+:%d+:(%d+):(%d+)')
  if d then
    return tonumber(d), tonumber(e)
  end
  return nil
end

-- Whether an exclusive holder's own lease lasts (not in its lock delay).
local function leaseLasts(value)
  local _, leaseEnd = exclusiveDelay(value)
  return leaseEnd == nil or leaseEnd > serverMillis()
end

-- A delayed exclusive value whose lease now ends at leaseEnd.
local function withLeaseEnd(value, leaseEnd)
  local head, d, rest = string.match(value, '^([^:|]*:%d+:%d+):(%d+):%d+(.*)$')
  return head .. ':' .. d .. ':' .. string.format('%.0f', leaseEnd) .. rest
end

-- An exclusive holder's value: "<owner>:<fence>:<cap>", with a delay > 0 also its lease end.
local function exclusiveValue(owner, fence, cap, delay, leaseEnd)
  local value = owner .. ':' .. string.format('%.0f', fence) .. ':' .. string.format('%.0f', cap)
  if delay > 0 then
    value = value .. ':' .. string.format('%.0f', delay) .. ':' .. string.format('%.0f', leaseEnd)
  end
  return value
end

-- Queues an owner for a hand-off (acquire.lua, acquire-shared.lua): its entry in the table,
-- "<expires>:<lease>:<max hold>:<kind>:<channel>" (kind "x" for an exclusive lock, "r" for a
-- reader, "s<n>" for a permit of a semaphore of n; with a lock delay, "d<delay>:" before the
-- channel), its token at the end of the queue.
local function joinQueue(queue, table, owner, now, entryMillis, lease, maxHold, kind, channel, delay)
  local delayed = ''
  if delay and tonumber(delay) > 0 then
    delayed = 'd' .. delay .. ':'
  end
  local entry = string.format('%.0f', now + entryMillis) .. ':' .. lease .. ':' .. maxHold .. ':' .. kind .. ':'
    .. delayed .. channel
  if redis.call('HSET', table, owner, entry) == 1 then
    redis.call('RPUSH', queue, owner)
  end
  -- the queue outlives the last refresh of its entries by a while, never for good
  redis.call('PEXPIRE', queue, entryMillis + 60000)
  redis.call('PEXPIRE', table, entryMillis + 60000)
end

-- A queued owner that got the key leaves the queue (no table: it was not queued).
local function leaveQueue(queue, table, owner)
  if table and redis.call('HDEL', table, owner) == 1 then
    redis.call('LREM', queue, 0, owner)
  end
end

-- A queue entry's expiry, lease, max hold, kind, channel and lock delay; nil when malformed. An
-- entry without a kind ("<expires>:<lease>:<max hold>:<channel>", as earlier versions queued an
-- exclusive waiter) is an exclusive one.
local function readEntry(entry)
  local expires, lease, maxHold, kind, channel = string.match(entry, '^(%d+):(%d+):(%d+):(%w+):(.*)$')
  if not expires then
    return nil
  end
  if kind ~= 'x' and kind ~= 'r' and not string.match(kind, '^s%d+$') then
    channel = kind .. ':' .. channel
    kind = 'x'
  end
  local delay = 0
  local d, rest = string.match(channel, '^d(%d+):(.*)$')
  if d then
    delay, channel = tonumber(d), rest
  end
  return tonumber(expires), tonumber(lease), tonumber(maxHold), kind, channel, delay
end

-- A waiter's kind, lease, max hold, channel and lock delay while its entry lives, else nil.
local function liveEntry(table, waiter, now)
  local entry = waiter and redis.call('HGET', table, waiter)
  if not entry then
    return nil
  end
  local expires, lease, maxHold, kind, channel, delay = readEntry(entry)
  if expires and expires > now then
    return kind, lease, maxHold, channel, delay
  end
  return nil
end

-- Takes the first waiter off a queue.
local function dequeue(queue, table, waiter)
  redis.call('LPOP', queue)
  redis.call('HDEL', table, waiter)
end

-- The first live waiter of a queue, then its entry as liveEntry reads it; nil when there is
-- none. Dead entries (expired, or gone from the table) before it are dropped; it stays first.
local function firstLive(queue, table, now)
  while true do
    local waiter = redis.call('LINDEX', queue, 0)
    if not waiter then
      return nil
    end
    local kind, lease, maxHold, channel, delay = liveEntry(table, waiter, now)
    if kind then
      return waiter, kind, lease, maxHold, channel, delay
    end
    dequeue(queue, table, waiter)
  end
end

-- A writer on several keys (acquire-all.lua) that waits for the readers of a key marks the
-- key's waiter table: field "~w" = "<owner>:<expires>" (server ms; the writer's queue-entry
-- life, refreshed by each of its attempts). While the mark lives, readers that come after it
-- wait behind it as behind a writer first in the queue, and a release that frees the key keeps
-- it for that writer until the mark ends: the key then holds "~w:<owner>" (":w" appended), which
-- readers and other writers wait for and that writer takes (lib-release.lua, acquire-all.lua).
-- The live mark, or nil.
local function writerMark(table, now)
  local mark = table and redis.call('HGET', table, '~w')
  if not mark then
    return nil
  end
  local expires = tonumber(string.match(mark, ':(%d+)$'))
  return (expires ~= nil and expires > now) and mark or nil
end
