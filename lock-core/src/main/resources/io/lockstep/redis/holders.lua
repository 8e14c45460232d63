-- Shared holders (read locks and semaphores), prepended to the scripts that read them. A
-- key held by readers or permit holders holds
--   "<kind>|<owner>,<fence>,<expires>,<cap>|<owner>,<fence>,<expires>,<cap>..."
-- (with ":w" appended while someone waits for it, as for an exclusive holder), where
-- <kind> is "r" (readers) or "s<n>" (a semaphore of n permits), <expires> is the server
-- time (ms) at which that holder's lease ends (0: with the key's own TTL, for the first
-- holder until another one joins) and <cap> its max-hold cap (0: none); a holder with a lock
-- delay has ",<delay>" (ms) after its cap. The key's TTL is the latest <expires> (plus its
-- holder's delay): a holder whose process died frees its share when its own lease ends, or its
-- delay after (it is dropped by the next script that reads the holders), and the key expires
-- with the last. An exclusive holder's value ("<owner>:<fence>:<cap>", with a lock delay
-- "<owner>:<fence>:<cap>:<delay>:<lease end>", see exclusiveDelay) has no "|".

local function isShared(value)
  return string.find(value, '|', 1, true) ~= nil
end

local function holdsShare(value, owner)
  return string.find(value, '|' .. owner .. ',', 1, true) ~= nil
end

local function serverMillis()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- kind, holders ({owner, fence, expires, cap, delay} each), waited
local function parseShared(value)
  local waited = string.sub(value, -2) == ':w'
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

-- How many holders a kind admits ("r": any number), and what the other scripts report
-- for it: 0 for readers, n for a semaphore of n permits.
local function permitsOf(kind)
  if kind == 'r' then
    return 0
  end
  return tonumber(string.sub(kind, 2))
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

-- Whether an exclusive holder's own lease lasts (not in its lock delay); clock() gives the
-- server time in ms, asked only for a value with a delay.
local function leaseLasts(value, clock)
  local _, leaseEnd = exclusiveDelay(value)
  return leaseEnd == nil or leaseEnd > clock()
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


-- A writer on several keys (acquire-all.lua) that waits for the readers of a key marks the
-- key's waiter table: field "~w" = "<owner>:<expires>" (server ms; the writer's queue-entry
-- life, refreshed by each of its attempts). While the mark lives, readers that come after it
-- wait behind it as behind a writer first in the queue, and a release that frees the key keeps
-- it for that writer until the mark ends: the key then holds "~w:<owner>" (":w" appended), which
-- readers and other writers wait for and that writer takes (release.lua, acquire-all.lua).
-- Whether a live mark is there.
local function writerMarked(table, now)
  local mark = table and redis.call('HGET', table, '~w')
  if not mark then
    return false
  end
  local expires = tonumber(string.match(mark, ':(%d+)$'))
  return expires ~= nil and expires > now
end
