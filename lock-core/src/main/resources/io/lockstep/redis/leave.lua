-- A waiter gives up: it leaves the queues of its keys, takes its mark off (a writer on several
-- keys, see writerMark in lib-queue.lua), and releases what it was handed meanwhile as release.lua
-- does. A writer that readers waited behind admits the readers first in line and tells the
-- others to ask again; a key a release kept for this writer ("~w:<owner>:w") is free again.
-- KEYS[1..n]      lock keys
-- KEYS[n+1..2n]   the waiter queue of each lock key
-- KEYS[2n+1..3n]  the waiter table of each lock key
-- KEYS[3n+1..4n]  the fencing counter of each lock key
-- ARGV            owner token, notification, publish command (see lib-release.lua)
-- Returns         the number of keys released or handed off, as release.lua
local n = #KEYS / 4
local released = 0
for i = 1, n do
  local k = {key = KEYS[i], queue = KEYS[n + i], table = KEYS[2 * n + i], counter = KEYS[3 * n + i]}
  local current = redis.call('GET', k.key)
  local left = redis.call('LREM', k.queue, 0, owner)
  redis.call('HDEL', k.table, owner)
  local mark = redis.call('HGET', k.table, '~w')
  if mark and ownedBy(mark, owner) then
    -- a writer on several keys gives up: the readers behind it ask again
    redis.call('HDEL', k.table, '~w')
    left = 1
  end
  if current == '~w:' .. owner .. ':w' then
    -- the key a release kept for this writer is free again
    redis.call('DEL', k.key)
    if notifies then
      redis.pcall(publish, k.key, message)
    end
    current = nil
  end
  if left > 0 and current and isShared(current) and isWaited(current) and notifies then
    -- a writer that readers waited behind gives up: the readers first in line join the
    -- readers now, and those not queued are told to ask again
    local kind, holders = parseShared(current)
    if kind == 'r' then
      local latest
      holders, latest = liveHolders(k.key, holders, serverMillis())
      local before = #holders
      latest = math.max(latest, admitShares(k, kind, holders, -1))
      if #holders > before then
        storeShared(k.key, kind, holders, true, latest, serverMillis())
        current = redis.call('GET', k.key)
      end
    end
    redis.pcall(publish, k.key, message)
  end
  released = released + release(k, current)
end
return released
