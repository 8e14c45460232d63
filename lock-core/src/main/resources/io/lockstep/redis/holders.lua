-- Shared holders (read locks and semaphores), prepended to the scripts that read them. A
-- key held by readers or permit holders holds
--   "<kind>|<owner>,<fence>,<expires>,<cap>|<owner>,<fence>,<expires>,<cap>..."
-- (with ":w" appended while someone waits for it, as for an exclusive holder), where
-- <kind> is "r" (readers) or "s<n>" (a semaphore of n permits), <expires> is the server
-- time (ms) at which that holder's lease ends (0: with the key's own TTL, for the first
-- holder until another one joins) and <cap> its max-hold cap (0: none). The key's TTL is
-- the latest <expires>: a holder whose process died frees its share when its own lease
-- ends (it is dropped by the next script that reads the holders), and the key expires with
-- the last lease. An exclusive holder's value ("<owner>:<fence>:<cap>") has no "|".

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

-- kind, holders ({owner, fence, expires, cap} each), waited
local function parseShared(value)
  local waited = string.sub(value, -2) == ':w'
  if waited then
    value = string.sub(value, 1, -3)
  end
  local holders = {}
  for owner, fence, expires, cap in string.gmatch(value, '|([^,|]+),(%d+),(%d+),(%d+)') do
    holders[#holders + 1] = {owner, tonumber(fence), tonumber(expires), tonumber(cap)}
  end
  return string.match(value, '^([^|]*)'), holders, waited
end

local function formatShared(kind, holders, waited)
  local parts = {kind}
  for _, h in ipairs(holders) do
    parts[#parts + 1] = h[1] .. ',' .. string.format('%.0f', h[2]) .. ',' .. string.format('%.0f', h[3]) .. ','
      .. string.format('%.0f', h[4])
  end
  local value = table.concat(parts, '|')
  if waited then
    value = value .. ':w'
  end
  return value
end

-- The holders whose lease has not ended (an expiry of 0 becomes the key's), and the latest
-- expiry among them.
local function liveHolders(key, holders, now)
  local ttl = nil
  local live = {}
  local latest = 0
  for _, h in ipairs(holders) do
    if h[3] == 0 then
      if not ttl then
        ttl = redis.call('PTTL', key)
      end
      h[3] = now + math.max(ttl, 0)
    end
    if h[3] > now then
      live[#live + 1] = h
      latest = math.max(latest, h[3])
    end
  end
  return live, latest
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
-- reader, "s<n>" for a permit of a semaphore of n), its token at the end of the queue.
local function joinQueue(queue, table, owner, now, entryMillis, lease, maxHold, kind, channel)
  local entry = string.format('%.0f', now + entryMillis) .. ':' .. lease .. ':' .. maxHold .. ':' .. kind .. ':'
    .. channel
  if redis.call('HSET', table, owner, entry) == 1 then
    redis.call('RPUSH', queue, owner)
  end
  -- the queue outlives the last refresh of its entries by a while, never for good
  redis.call('PEXPIRE', queue, entryMillis + 60000)
  redis.call('PEXPIRE', table, entryMillis + 60000)
end

-- A queue entry's expiry, lease, max hold, kind and channel; nil when malformed. An entry
-- without a kind ("<expires>:<lease>:<max hold>:<channel>", as earlier versions queued an
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
  return tonumber(expires), tonumber(lease), tonumber(maxHold), kind, channel
end


-- A writer on several keys (acquire-all.lua) that waits for the readers of a key marks the
-- key's waiter table: field "~w" = "<owner>:<expires>" (server ms; the writer's queue-entry
-- life, refreshed by each of its attempts). While the mark lives, readers that come after it
-- wait behind it as behind a writer first in the queue, and a release does not hand the key to
-- readers first in line (acquire-shared.lua, release.lua). Whether a live mark is there.
local function writerMarked(table, now)
  local mark = table and redis.call('HGET', table, '~w')
  if not mark then
    return false
  end
  local expires = tonumber(string.match(mark, ':(%d+)$'))
  return expires ~= nil and expires > now
end
