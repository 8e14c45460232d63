-- Releases locks held by one owner: compare-and-delete, never a plain DEL. A key marked as
-- waited for (":w" at the end of its value, see acquire.lua) is handed directly to the first
-- live waiter of its queue (a fresh lease and fencing token, told on its own channel) or,
-- when no one is queued, deleted with a release notification on the key's channel; an unmarked
-- key is just deleted. The hand-off is told on the waiter's own channel (from its queue entry).
-- KEYS[1..n]      lock keys
-- with ARGV[4] = 'queues', also (else only the lock keys are given):
-- KEYS[n+1..2n]   the waiter queue of each lock key
-- KEYS[2n+1..3n]  the waiter table of each lock key
-- KEYS[3n+1..4n]  the fencing counter of each lock key
-- ARGV[1]     owner token
-- ARGV[2]     the release notification ('released' when absent); empty: notify nobody and hand
--             off nothing (Redlock undoing a failed attempt, which frees no lock)
-- ARGV[3]     optional: the publish command, PUBLISH (default) or SPUBLISH (sharded, Cluster)
-- ARGV[4]     optional: 'queues' (see KEYS)
-- ARGV[5]     optional: 'leave': the owner also leaves the queues (a waiter that gives up; a
--             writer that leaves a queue while readers hold the key notifies the readers that
--             waited behind it)
-- A key held by readers or permit holders (holders.lua) loses this owner's share; the last
-- holder to leave frees it as above, and a semaphore's permit holder that leaves notifies the
-- key's waiters.
-- Returns     the number of keys deleted or handed off; a key that expired or belongs to another
--             owner is left untouched. A hand-off is published on the waiter's channel as
--             "g:<owner>:<fence>:<lease ms>:<key>". Where the ACL forbids the channel the release
--             still succeeds (waiters poll, and find the lock theirs).
local queues = ARGV[4] == 'queues'
local n = #KEYS
if queues then
  n = n / 4
end
local prefix = ARGV[1] .. ':'
local message = ARGV[2] or 'released'
local publish = ARGV[3] or 'PUBLISH'
local now = nil

local function clock()
  if not now then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return now
end

-- Hands key i to its first live waiter; false when none is queued.
local function handOff(i)
  local queue, table, counter = KEYS[n + i], KEYS[2 * n + i], KEYS[3 * n + i]
  while true do
    local waiter = redis.call('LPOP', queue)
    if not waiter then
      return false
    end
    local entry = redis.call('HGET', table, waiter)
    redis.call('HDEL', table, waiter)
    if entry then
      local expires, lease, maxHold, channel = string.match(entry, '^(%d+):(%d+):(%d+):(.*)$')
      if expires and tonumber(expires) > clock() then
        local fence = redis.call('INCR', counter)
        if fence == 1 then
          fence = clock() * 1000
          redis.call('SET', counter, string.format('%.0f', fence))
        end
        local cap = 0
        if tonumber(maxHold) > 0 then
          cap = clock() + tonumber(maxHold)
        end
        local text = string.format('%.0f', fence)
        -- still marked: the rest of the queue is served by the next release
        redis.call('SET', KEYS[i], waiter .. ':' .. text .. ':' .. string.format('%.0f', cap) .. ':w', 'PX', lease)
        redis.pcall(publish, channel, 'g:' .. waiter .. ':' .. text .. ':' .. lease .. ':' .. KEYS[i])
        return true
      end
    end
  end
end

-- The key is free of this owner and of every other holder: hands it off or deletes it.
local function free(i, current)
  local waited = string.sub(current, -2) == ':w'
  if not (waited and queues and message ~= '' and handOff(i)) then
    redis.call('DEL', KEYS[i])
    if waited and message ~= '' then
      redis.pcall(publish, KEYS[i], message)
    end
  end
end

-- One of several holders (a reader or a permit holder) leaves; the last one frees the key.
local function leaveShare(i, current)
  local kind, holders, waited = parseShared(current)
  local others = {}
  for _, h in ipairs(holders) do
    if h[1] ~= ARGV[1] then
      others[#others + 1] = h
    end
  end
  local latest = 0
  if #others > 0 then
    others, latest = liveHolders(KEYS[i], others, clock())
  end
  if #others == 0 then
    free(i, current)
    return
  end
  storeShared(KEYS[i], kind, others, waited, latest, clock())
  if waited and message ~= '' and kind ~= 'r' then
    -- a permit is free: its waiters try again (a writer waits for the last reader)
    redis.pcall(publish, KEYS[i], message)
  end
end

local released = 0
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if queues and ARGV[5] == 'leave' then
    local left = redis.call('LREM', KEYS[n + i], 0, ARGV[1])
    redis.call('HDEL', KEYS[2 * n + i], ARGV[1])
    if left > 0 and current and isShared(current) and string.sub(current, -2) == ':w' and message ~= '' then
      -- a writer that readers waited behind gives up: they may join the readers now
      redis.pcall(publish, KEYS[i], message)
    end
  end
  if current and string.sub(current, 1, #prefix) == prefix then
    released = released + 1
    free(i, current)
  elseif current and holdsShare(current, ARGV[1]) then
    released = released + 1
    leaveShare(i, current)
  end
end
return released
