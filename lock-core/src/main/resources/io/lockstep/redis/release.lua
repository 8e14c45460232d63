-- Releases locks held by one owner: compare-and-delete, never a plain DEL. A key marked as
-- waited for (":w" at the end of its value, see acquire.lua) is handed directly to the first
-- live waiter of its queue (a fresh lease and fencing token, told on its own channel; readers
-- first in line are handed it together, and permit holders as many as the semaphore admits) or,
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
-- holder to leave frees it as above, and a semaphore's permit holder that leaves hands its permit
-- to the first permit holder in line, or notifies the key's waiters when none is queued.
-- Returns     the number of keys deleted or handed off; a key that expired or belongs to another
--             owner is left untouched. A key (or share) of this owner in its lock delay (its lease
--             ended, see exclusiveDelay in holders.lua) is freed at once all the same, but not
--             counted: the lease had ended. A hand-off is published on the waiter's channel as
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

-- The next fencing token of key i.
local function nextFence(i)
  local counter = KEYS[3 * n + i]
  local fence = redis.call('INCR', counter)
  if fence == 1 then
    fence = clock() * 1000
    redis.call('SET', counter, string.format('%.0f', fence))
  end
  return fence
end

-- Tells a waiter on its client's channel that key i was handed to it.
local function tell(i, channel, waiter, fence, lease)
  redis.pcall(publish, channel, 'g:' .. waiter .. ':' .. string.format('%.0f', fence) .. ':' .. lease .. ':' .. KEYS[i])
end

-- Grants a share of key i to a queued reader or permit holder (added to holders, told);
-- returns when its lease ends.
local function grantShare(i, holders, waiter, lease, maxHold, channel, delay)
  local fence = nextFence(i)
  local cap = 0
  if maxHold > 0 then
    cap = clock() + maxHold
  end
  holders[#holders + 1] = {waiter, fence, clock() + lease, cap, delay or 0}
  tell(i, channel, waiter, fence, lease)
  return clock() + lease + (delay or 0)
end

-- Grants shares of key i to the live waiters of this kind first in its queue, at most room of
-- them (-1: no limit), dropping dead entries on the way; returns the latest lease end (0: none).
local function admitShares(i, kind, holders, room)
  local queue, table = KEYS[n + i], KEYS[2 * n + i]
  local latest = 0
  while room ~= 0 do
    local waiter = redis.call('LINDEX', queue, 0)
    if not waiter then
      break
    end
    local entry = redis.call('HGET', table, waiter)
    local expires, lease, maxHold, k, channel, delay = nil, nil, nil, nil, nil, nil
    if entry then
      expires, lease, maxHold, k, channel, delay = readEntry(entry)
    end
    local live = expires and expires > clock()
    if live and k ~= kind then
      break
    end
    redis.call('LPOP', queue)
    redis.call('HDEL', table, waiter)
    if live then
      latest = math.max(latest, grantShare(i, holders, waiter, lease, maxHold, channel, delay))
      room = room - 1
    end
  end
  return latest
end

-- Hands key i, free now, to its first live waiter: an exclusive one alone, or the readers
-- first in line, or as many permit holders first in line as the semaphore admits; false when
-- none is queued.
local function handOff(i)
  local queue, table = KEYS[n + i], KEYS[2 * n + i]
  local mark = redis.call('HGET', table, '~w')
  if mark and writerMarked(table, clock()) then
    -- a writer on several keys waits for the key: only a writer first in line goes before it;
    -- else the key is kept for that writer until its mark ends, and it is told to ask again
    local head = redis.call('LINDEX', queue, 0)
    local entry = head and redis.call('HGET', table, head)
    local expires, kind = nil, nil
    if entry then
      local _
      expires, _, _, kind = readEntry(entry)
    end
    if not (expires and expires > clock() and kind == 'x') then
      local owner, ends = string.match(mark, '^(.*):(%d+)$')
      redis.call('SET', KEYS[i], '~w:' .. owner .. ':w', 'PX', math.max(1, tonumber(ends) - clock()))
      redis.pcall(publish, KEYS[i], message)
      return true
    end
  end
  while true do
    local waiter = redis.call('LPOP', queue)
    if not waiter then
      return false
    end
    local entry = redis.call('HGET', table, waiter)
    redis.call('HDEL', table, waiter)
    local expires, lease, maxHold, kind, channel, delay = nil, nil, nil, nil, nil, nil
    if entry then
      expires, lease, maxHold, kind, channel, delay = readEntry(entry)
    end
    if expires and expires > clock() then
      if kind ~= 'x' then
        local holders = {}
        local latest = grantShare(i, holders, waiter, lease, maxHold, channel, delay)
        local room = (kind == 'r') and -1 or (permitsOf(kind) - 1)
        latest = math.max(latest, admitShares(i, kind, holders, room))
        -- still marked: the rest of the queue is served by later releases
        storeShared(KEYS[i], kind, holders, true, latest, clock())
        return true
      end
      local fence = nextFence(i)
      local cap = 0
      if maxHold > 0 then
        cap = clock() + maxHold
      end
      -- still marked: the rest of the queue is served by the next release
      redis.call('SET', KEYS[i], exclusiveValue(waiter, fence, cap, delay, clock() + lease) .. ':w', 'PX',
        lease + delay)
      tell(i, channel, waiter, fence, lease)
      return true
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
  local admitted = 0
  if waited and queues and message ~= '' and kind ~= 'r' then
    -- a permit is free: the first permit holders in line get it
    local before = #others
    latest = math.max(latest, admitShares(i, kind, others, permitsOf(kind) - #others))
    admitted = #others - before
  end
  storeShared(KEYS[i], kind, others, waited, latest, clock())
  if waited and message ~= '' and kind ~= 'r' and admitted == 0 then
    -- a permit is free and no one is queued for it: its waiters try again (a writer waits
    -- for the last reader)
    redis.pcall(publish, KEYS[i], message)
  end
end

local released = 0
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if queues and ARGV[5] == 'leave' then
    local left = redis.call('LREM', KEYS[n + i], 0, ARGV[1])
    redis.call('HDEL', KEYS[2 * n + i], ARGV[1])
    local mark = redis.call('HGET', KEYS[2 * n + i], '~w')
    if mark and string.sub(mark, 1, #prefix) == prefix then
      -- a writer on several keys gives up: the readers behind it ask again
      redis.call('HDEL', KEYS[2 * n + i], '~w')
      left = 1
    end
    if current == '~w:' .. prefix .. 'w' then
      -- the key a release kept for this writer is free again
      redis.call('DEL', KEYS[i])
      if message ~= '' then
        redis.pcall(publish, KEYS[i], message)
      end
      current = nil
    end
    if left > 0 and current and isShared(current) and string.sub(current, -2) == ':w' and message ~= '' then
      -- a writer that readers waited behind gives up: the readers first in line join the
      -- readers now, and those not queued are told to ask again
      local kind, holders = parseShared(current)
      if kind == 'r' then
        local latest
        holders, latest = liveHolders(KEYS[i], holders, clock())
        local before = #holders
        latest = math.max(latest, admitShares(i, kind, holders, -1))
        if #holders > before then
          storeShared(KEYS[i], kind, holders, true, latest, clock())
          current = redis.call('GET', KEYS[i])
        end
      end
      redis.pcall(publish, KEYS[i], message)
    end
  end
  if current and string.sub(current, 1, #prefix) == prefix then
    if leaseLasts(current, clock) then
      released = released + 1
    end
    free(i, current)
  elseif current and holdsShare(current, ARGV[1]) then
    local _, holders = parseShared(current)
    local mine = holderOf(holders, ARGV[1])
    if mine and mine[5] > 0 then
      -- with a lock delay: not counted when in it (the lease had ended)
      mine = holderOf(liveHolders(KEYS[i], holders, clock()), ARGV[1])
      mine = (mine and holderLasts(mine, clock())) and mine or nil
    end
    if mine then
      released = released + 1
    end
    leaveShare(i, current)
  end
end
return released
