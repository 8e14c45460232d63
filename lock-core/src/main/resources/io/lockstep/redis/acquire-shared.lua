-- Acquires one key as one of its readers or one of a semaphore's permit holders (see
-- lib-shared.lua for what the key holds), with a fencing token from the same counter as
-- the exclusive lock's, so tokens increase per key across all modes.
-- KEYS[1]  lock key
-- KEYS[2]  fencing counter (never expires)
-- KEYS[3]  optional: the key's waiter queue (acquire.lua): a reader does not join readers while
--          a live writer is first in it; with 'q' or 'n', the owner queues there for a hand-off
-- KEYS[4]  optional, with KEYS[3]: the key's waiter table
-- ARGV[1]  owner token (128-bit random, hex)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  max hold in milliseconds, 0 for none (see acquire.lua)
-- ARGV[4]  kind: 'r' (read lock) or 's<n>' (a semaphore of n permits)
-- ARGV[5]  'w': when it must wait, mark the key as waited for (its releases then publish a
--          notification); 'q': also queue the owner for a hand-off (release.lua hands a freed key
--          to the readers first in line together, a freed permit to the first permit holder),
--          and an owner that gets its share leaves the queue; 'n': 'q' for a first attempt,
--          which has no entry to leave; '' for a caller that does not wait
-- ARGV[6]  with 'q' or 'n': how long the queue entry lives, in ms, unless the owner asks again
-- ARGV[7]  with 'q' or 'n': the channel on which the owner's client hears its hand-offs
-- ARGV[8]  with 'q' or 'n': the lease a hand-off grants, in ms
-- ARGV[9]  optional: the lock delay in ms (0 or absent: none): a share whose lease ends without a
--          release stays counted this long after it (a writer waits for it, a permit stays taken;
--          other readers join)
-- Returns  {ACQUIRED, fence}       acquired
--          {ACQUIRED, fence, ttl}  the owner held a share already (a retried acquire): its lease
--                                  is refreshed within its cap; ttl = the lease now set, in ms
--          {HELD, pttl, 0, counter}  it must wait: held by a writer, by as many permit holders as
--                                  the semaphore admits, or (a reader) by readers while a writer
--                                  is queued for the key, which goes first, or free or held by
--                                  readers while a writer on several keys has marked it
--                                  (writerMark in lib-queue.lua); pttl = the time until the first
--                                  holder's lease ends, in ms; counter as in acquire.lua
--          {OTHER_KIND, permits}   the key is held another way: permits = 0 for readers, 1 for
--                                  an exclusive holder, n for a semaphore of n permits; nothing
--                                  done
-- Uncontended (the key free), this runs INCR and SET only (and TIME with a max hold).

local owner, lease, kind = ARGV[1], tonumber(ARGV[2]), ARGV[4]
local maxHold = tonumber(ARGV[3])
local delay = tonumber(ARGV[9] or '0') or 0
local queues = (ARGV[5] == 'q' or ARGV[5] == 'n') and KEYS[4]

-- an owner that gets its share leaves the queue
local function acquired(reply)
  if ARGV[5] == 'q' then
    leaveQueue(KEYS[3], KEYS[4], owner)
  end
  return reply
end

-- it must wait: it marks the key (and queues) as ARGV[5] says
local function wait(current)
  if queues then
    joinQueue(KEYS[3], KEYS[4], owner, serverMillis(), tonumber(ARGV[6]), ARGV[8], ARGV[3], kind, ARGV[7], delay)
  end
  if ARGV[5] ~= '' then
    markWaited(KEYS[1], current)
  end
end

local fence = nextFence(KEYS[2])
local cap = 0
if maxHold > 0 then
  cap = serverMillis() + maxHold
end
if redis.call('SET', KEYS[1], formatShared(kind, {{owner, fence, 0, cap, delay}}, false), 'NX', 'PX', lease + delay) then
  return acquired({ACQUIRED, fence})
end
local current = redis.call('GET', KEYS[1])
if not isShared(current) then
  -- an exclusive holder: a writer, which readers wait for; a semaphore is another kind
  if kind ~= 'r' then
    return {OTHER_KIND, 1}
  end
  wait(current)
  return {HELD, redis.call('PTTL', KEYS[1]), 0, fence}
end
local heldKind, holders, waited = parseShared(current)
if heldKind ~= kind then
  return {OTHER_KIND, permitsOf(heldKind)}
end
local now = serverMillis()
local latest
holders, latest = liveHolders(KEYS[1], holders, now)
local mine = holderOf(holders, owner)
if mine and not holderLasts(mine, now) then
  -- its own share, whose lease ended: in its lock delay, it waits like anyone else
  wait(current)
  return {HELD, math.max(0, mine[3] + mine[5] - now), 0, fence}
end
if mine then
  local ttl = lease
  if mine[4] > 0 then
    ttl = math.min(ttl, mine[4] - now)
  end
  if ttl > 0 then
    changed(mine)[3] = now + ttl
    -- a shorter lease than it had: the latest end may be another's now
    latest = latestEnd(holders)
  else
    ttl = math.max(0, mine[3] - now)
  end
  storeShared(KEYS[1], kind, holders, waited, latest, now)
  return acquired({ACQUIRED, mine[2], ttl})
end
-- Whether the first live waiter queued for the key is a writer.
local function writerQueued()
  if not KEYS[4] then
    return false
  end
  local _, first = firstLive(KEYS[3], KEYS[4], now)
  return first == 'x'
end

local admitted
if kind == 'r' then
  -- a writer waiting for the readers is not starved by readers that come after it
  admitted = #holders == 0 or not (writerQueued() or writerMark(KEYS[4], now))
else
  admitted = #holders < permitsOf(kind)
end
if admitted then
  if maxHold > 0 then
    cap = now + maxHold
  end
  holders[#holders + 1] = {owner, fence, now + lease, cap, delay}
  storeShared(KEYS[1], kind, holders, waited, math.max(latest, now + lease + delay), now)
  return acquired({ACQUIRED, fence})
end
if queues then
  joinQueue(KEYS[3], KEYS[4], owner, now, tonumber(ARGV[6]), ARGV[8], ARGV[3], kind, ARGV[7], delay)
end
if ARGV[5] ~= '' and not waited then
  storeShared(KEYS[1], kind, holders, true, latest, now)
end
local first = latest
for _, h in ipairs(holders) do
  first = math.min(first, h[3] + h[5])
end
return {HELD, math.max(0, first - now), 0, fence}
