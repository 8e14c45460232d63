-- Acquires one lock: SET key "<owner>:<fence>:<cap>" NX PX lease, with a fencing token; a
-- waiter that finds it held may queue itself for a direct hand-off (see release.lua).
-- KEYS[1]  lock key
-- KEYS[2]  fencing counter (never expires)
-- KEYS[3]  optional: the lock's waiter queue (a list of owner tokens, first come first served)
-- KEYS[4]  optional: the lock's waiter table (owner token -> its entry, see joinQueue in
--          holders.lua, which is prepended)
-- ARGV[1]  owner token (128-bit random, hex)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  max hold in milliseconds, 0 for none: <cap> = server time (ms) + max hold, and no
--          renewal extends the key past it
-- ARGV[4]  optional, when held by another owner: 'w' marks the key as waited for (its release
--          publishes a notification), 'q' also queues the owner (needs KEYS[3] and KEYS[4]), and
--          an owner that gets the lock leaves the queue; 'n' is 'q' for an owner's first attempt,
--          which has no queue entry to leave
-- ARGV[5]  with 'q' or 'n': how long the queue entry lives, in ms, unless the waiter asks again
--          first (a waiter that vanished is skipped once its entry expires)
-- ARGV[6]  with 'q' or 'n': the channel on which the waiter's client hears its hand-offs
-- ARGV[7]  optional, with 'q' or 'n': the lease a hand-off grants the waiter, in ms (default
--          ARGV[2]; shorter for a lease the waiter's watchdog extends, so that a waiter that
--          vanished after it queued holds the lock up only that long)
-- ARGV[8]  optional: the lock delay in ms (0 or absent: none): the key stays taken this long
--          after a lease that ends without a release (see exclusiveDelay in holders.lua)
-- Returns  {1, fence}  acquired
--          {1, fence, ttl}  the key already held this owner token (a retried acquire, or a waiter
--                      the lock was handed to): its lease is refreshed within its cap, and the
--                      token it was granted with and the lease now set, in ms, are returned
--          {-2, permits}  held by a semaphore of that many permits (see holders.lua): not a
--                      key of exclusive locks; nothing done
--          {0, pttl, 0, counter}  held by another owner (a writer waits for readers); pttl = its remaining lease in ms, counter =
--                      the fencing counter as this script left it: a hand-off granted after
--                      this script has a larger fencing token, one granted before a smaller
-- Uncontended, this runs INCR and SET only (and HDEL with 'q'). The fencing token comes from
-- INCR, so it is strictly increasing for every key served by the counter; a counter that is
-- missing (a new or restarted Redis without persistence) restarts at the server time in
-- microseconds, above every token issued before as long as fewer than a million were issued per
-- second.
-- a queued waiter that gets the lock leaves the queue
local function leaveQueue()
  if KEYS[4] and ARGV[4] == 'q' and redis.call('HDEL', KEYS[4], ARGV[1]) == 1 then
    redis.call('LREM', KEYS[3], 0, ARGV[1])
  end
end
local delay = tonumber(ARGV[8] or '0') or 0
local fence = redis.call('INCR', KEYS[2])
if fence == 1 then
  local time = redis.call('TIME')
  fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
  redis.call('SET', KEYS[2], string.format('%.0f', fence))
end
local now = nil
local cap = 0
if tonumber(ARGV[3]) > 0 or delay > 0 then
  now = serverMillis()
end
if tonumber(ARGV[3]) > 0 then
  cap = now + tonumber(ARGV[3])
end
if redis.call('SET', KEYS[1], exclusiveValue(ARGV[1], fence, cap, delay, (now or 0) + tonumber(ARGV[2])), 'NX',
    'PX', tonumber(ARGV[2]) + delay) then
  leaveQueue()
  return {1, fence}
end
local current = redis.call('GET', KEYS[1])
if string.sub(current, 1, 1) == 's' and string.find(current, '|', 1, true) then
  -- held by a semaphore's permit holders: another kind of lock (holders.lua)
  return {-2, tonumber(string.match(current, '^s(%d+)'))}
end
local prefix = ARGV[1] .. ':'
local held = exclusiveDelay(current)
if string.sub(current, 1, #prefix) == prefix and (not held or leaseLasts(current, serverMillis)) then
  local granted, heldCap = string.match(current, '^[^:]*:(%d+):(%d+)')
  local ttl = tonumber(ARGV[2])
  if tonumber(heldCap) > 0 then
    ttl = math.min(ttl, tonumber(heldCap) - serverMillis())
  end
  if ttl > 0 and held then
    redis.call('SET', KEYS[1], withLeaseEnd(current, serverMillis() + ttl), 'PX', ttl + held)
  elseif ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
  else
    ttl = redis.call('PTTL', KEYS[1]) - (held or 0)
  end
  leaveQueue()
  return {1, tonumber(granted), ttl}
end
local queues = ARGV[4] == 'q' or ARGV[4] == 'n'
if queues and KEYS[4] then
  joinQueue(KEYS[3], KEYS[4], ARGV[1], serverMillis(), tonumber(ARGV[5]), ARGV[7] or ARGV[2], ARGV[3], 'x', ARGV[6],
    delay)
end
if (queues or ARGV[4] == 'w') and string.sub(current, -2) ~= ':w' then
  redis.call('SET', KEYS[1], current .. ':w', 'KEEPTTL')
end
return {0, redis.call('PTTL', KEYS[1]), 0, fence}
