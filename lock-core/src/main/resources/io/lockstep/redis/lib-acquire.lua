-- The functions of the acquire scripts (acquire.lua, acquire-all.lua, acquire-shared.lua),
-- prepended after lib.lua: what a key holds, marking it as waited for, joining and leaving its
-- waiter queue.

-- The kind of a key held by readers or permit holders ("r", "s<n>"), or nil.
local function sharedKind(value)
  return isShared(value) and string.match(value, '^([^|]*)') or nil
end

-- Marks a key as waited for (":w", its TTL kept): its release publishes a notification.
local function markWaited(key, value)
  if not isWaited(value) then
    redis.call('SET', key, value .. ':w', 'KEEPTTL')
  end
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
  local entry = decimal(now + entryMillis) .. ':' .. lease .. ':' .. maxHold .. ':' .. kind .. ':'
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
