-- The functions of the release scripts (release.lua, leave.lua, delete.lua), prepended to them
-- after lib.lua, lib-shared.lua and lib-queue.lua: freeing a key, handing it to its first
-- waiters, a share leaving. Their ARGV:
-- ARGV[1]  owner token
-- ARGV[2]  the release notification ('released' when absent); empty: notify nobody and hand off
--          nothing (undoing a failed attempt, which frees no lock)
-- ARGV[3]  optional: the publish command, PUBLISH (default) or SPUBLISH (sharded, Cluster)
-- ARGV[4]  optional, release.lua of one key: a successor, a waiter of the releasing client that
--          release-plain.lua hands the key to when no one is queued (case 1 there)
-- ARGV[5]  the successor's hand-off lease in ms, with ARGV[4]
-- A key is named with its waiter queue, waiter table and fencing counter ({key, queue, table,
-- counter}); with the key alone (delete.lua) nothing is handed off. A release notification
-- tells the key's waiters that it is free (they ask again). A hand-off is told on the waiter's
-- own channel (from its queue entry) as "g:<owner>:<fence>:<lease ms>:<key>"; where the ACL
-- forbids a channel the release still succeeds (waiters poll, and find the lock theirs).
local owner, message, publish = ARGV[1], ARGV[2] or 'released', ARGV[3] or 'PUBLISH'
local notifies = message ~= ''

-- Tells a waiter on its client's channel that the key was handed to it (fence: the token in
-- decimal digits).
local function tell(k, channel, waiter, fence, lease)
  redis.pcall(publish, channel, 'g:' .. waiter .. ':' .. fence .. ':' .. lease .. ':' .. k.key)
end

-- Grants a share of the key to a queued reader or permit holder (added to holders, told on its
-- channel); returns when its lease ends.
local function grantShare(k, holders, waiter, lease, maxHold, channel, delay)
  local now = serverMillis()
  local fence = nextFence(k.counter)
  local cap = 0
  if maxHold > 0 then
    cap = now + maxHold
  end
  -- the token's digits written once, for the holder's text and the message
  local digits = decimal(fence)
  local holder = {waiter, fence, now + lease, cap, delay}
  holder[6] = holderText(holder, digits)
  holders[#holders + 1] = holder
  tell(k, channel, waiter, digits, lease)
  return now + lease + delay
end

-- Grants shares of the key to the live waiters of this kind first in its queue, at most room of
-- them (-1: no limit); returns the latest lease end (0: none).
local function admitShares(k, kind, holders, room)
  local latest = 0
  while room ~= 0 do
    local waiter, first, lease, maxHold, channel, delay = firstLive(k.queue, k.table, serverMillis())
    if not waiter or first ~= kind then
      break
    end
    redis.call('LPOP', k.queue)
    redis.call('HDEL', k.table, waiter)
    latest = math.max(latest, grantShare(k, holders, waiter, lease, maxHold, channel, delay))
    room = room - 1
  end
  return latest
end

-- Hands the key, free now, to its first live waiter: an exclusive one alone, or the readers
-- first in line, or as many permit holders first in line as the semaphore admits; false when
-- none is queued. The key stays marked: the rest of the queue is served by later releases.
local function handOff(k)
  local now = serverMillis()
  local mark = writerMark(k.table, now)
  -- a writer on several keys waits for the key: only a writer first in line goes before it;
  -- else the key is kept for that writer until its mark ends, and it is told to ask again
  if mark and liveEntry(k.table, redis.call('LINDEX', k.queue, 0), now) ~= 'x' then
    local writer, ends = string.match(mark, '^(.*):(%d+)$')
    redis.call('SET', k.key, '~w:' .. writer .. ':w', 'PX', math.max(1, tonumber(ends) - now))
    redis.pcall(publish, k.key, message)
    return true
  end
  local waiter, kind, lease, maxHold, channel, delay = firstLive(k.queue, k.table, now, true)
  if not waiter then
    return false
  end
  if kind ~= 'x' then
    local holders = {}
    local latest = grantShare(k, holders, waiter, lease, maxHold, channel, delay)
    local room = (kind == 'r') and -1 or (permitsOf(kind) - 1)
    latest = math.max(latest, admitShares(k, kind, holders, room))
    storeShared(k.key, kind, holders, true, latest, now)
    return true
  end
  local fence = nextFence(k.counter)
  local cap = 0
  if maxHold > 0 then
    cap = now + maxHold
  end
  redis.call('SET', k.key, exclusiveValue(waiter, fence, cap, delay, now + lease) .. ':w', 'PX', lease + delay)
  tell(k, channel, waiter, decimal(fence), lease)
  return true
end

-- The key is free of this owner and of every other holder: hands it off or deletes it.
local function free(k, current)
  local waited = isWaited(current)
  if not (waited and k.queue and notifies and handOff(k)) then
    redis.call('DEL', k.key)
    if waited and notifies then
      redis.pcall(publish, k.key, message)
    end
  end
end

-- One of several holders (a reader or a permit holder) leaves; the last one frees the key, and
-- a semaphore's permit holder that leaves hands its permit to the first permit holder in line,
-- or notifies the key's waiters when none is queued. current is the key's value, and kind,
-- holders and waited what parseShared read from it.
local function leaveShare(k, current, kind, holders, waited)
  local others = {}
  for _, h in ipairs(holders) do
    if h[1] ~= owner then
      others[#others + 1] = h
    end
  end
  local latest = 0
  if #others > 0 then
    others, latest = liveHolders(k.key, others, serverMillis())
  end
  if #others == 0 then
    free(k, current)
    return
  end
  local admitted = 0
  if waited and k.queue and notifies and kind ~= 'r' then
    local before = #others
    latest = math.max(latest, admitShares(k, kind, others, permitsOf(kind) - #others))
    admitted = #others - before
  end
  storeShared(k.key, kind, others, waited, latest, serverMillis())
  if waited and notifies and kind ~= 'r' and admitted == 0 then
    -- a permit is free and no one is queued for it: its waiters try again (a writer waits
    -- for the last reader)
    redis.pcall(publish, k.key, message)
  end
end

-- Frees the owner's hold of the key (current: its value), exclusive or a share: 1, or 0 when
-- it holds none. A hold in its lock delay (its lease ended, see exclusiveDelay in lib.lua) is
-- freed at once all the same, but not counted: the lease had ended.
local function release(k, current)
  if not current then
    return 0
  end
  if ownedBy(current, owner) then
    local counted = leaseLasts(current) and 1 or 0
    free(k, current)
    return counted
  end
  if holdsShare(current, owner) then
    -- read once: parsing is most of a share's release
    local kind, holders, waited = parseShared(current)
    local counted = shareOf(k.key, holders, owner) and 1 or 0
    leaveShare(k, current, kind, holders, waited)
    return counted
  end
  return 0
end
