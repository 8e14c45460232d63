-- Acquires one lock: SET key "<owner>:<fence>:<cap>" NX PX lease, with a fencing token; a
-- waiter that finds it held may queue itself for a direct hand-off (see release.lua).
-- KEYS[1]  lock key
-- KEYS[2]  fencing counter (never expires)
-- KEYS[3]  optional: the lock's waiter queue (a list of owner tokens, first come first served)
-- KEYS[4]  optional: the lock's waiter table (owner token -> its entry, see joinQueue in
--          lib-acquire.lua)
-- ARGV[1]  owner token (128-bit random, hex)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  optional, when held by another owner: 'w' marks the key as waited for (its release
--          publishes a notification); 'q:<entry>:<hand-off lease>:<channel>' also queues the
--          owner (needs KEYS[3] and KEYS[4]), and an owner that gets the lock leaves the queue;
--          'n:...' is 'q:...' for an owner's first attempt, which has no queue entry to leave.
--          <entry>: how long the queue entry lives, in ms, unless the waiter asks again first (a
--          waiter that vanished is skipped once its entry expires); <hand-off lease>: the lease a
--          hand-off grants the waiter, in ms (empty: ARGV[2]; shorter for a lease the waiter's
--          watchdog extends, so that a waiter that vanished after it queued holds the lock up
--          only that long); <channel>: where the waiter's client hears its hand-offs. One
--          argument, since Redis pays for each argument of a call (about 1,350 instructions,
--          counted with callgrind: docs/benchmarks.md); what follows the mode's letter is read
--          only when the key is held. Before the max hold, which most calls leave out: a
--          waiter's call then sends three arguments
-- ARGV[4]  optional: max hold in milliseconds, 0 or absent for none: <cap> = server time (ms) +
--          max hold, and no renewal extends the key past it
-- ARGV[5]  optional: the lock delay in ms (0 or absent: none): the key stays taken this long
--          after a lease that ends without a release (see exclusiveDelay in lib.lua)
-- Returns  {ACQUIRED, fence}       acquired
--          fence                   acquired, a free key in acquire-plain.lua's case: the token
--                                  alone, a bare integer (> 1)
--          {ACQUIRED, fence, ttl}  the key already held this owner token (a retried acquire, or a
--                                  waiter the lock was handed to): its lease is refreshed within
--                                  its cap, and the token it was granted with and the lease now
--                                  set, in ms, are returned
--          {OTHER_KIND, permits}   held by a semaphore of that many permits: not a key of
--                                  exclusive locks; nothing done
--          {HELD, pttl, 0, counter}  held by another owner (or by readers): pttl = its remaining
--                                  lease in ms, counter = the fencing counter as this script left
--                                  it: a hand-off granted after this script has a larger fencing
--                                  token, one granted before a smaller
-- Uncontended, this runs INCR and SET only (and HDEL with 'q'). The fencing token comes from
-- nextFence (lib.lua). Runs after acquire-plain.lua, which acquires a free key itself in the
-- commonest case and passes on the counter it incremented (plainIncr).

local owner, lease, maxHold = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4] or '0')
local delay = tonumber(ARGV[5] or '0') or 0
local mode = string.sub(ARGV[3] or '', 1, 1)
local fence = (plainIncr ~= nil) and fenceAfter(KEYS[2], plainIncr) or nextFence(KEYS[2])
local cap = 0
if maxHold > 0 then
  cap = serverMillis() + maxHold
end
local leaseEnd = (delay > 0) and serverMillis() + lease or 0
-- acquire-plain.lua tried this SET NX already when it incremented a counter that was there: the
-- key is taken
local taken = plainIncr ~= nil and plainIncr > 1
if not taken and redis.call('SET', KEYS[1], exclusiveValue(owner, fence, cap, delay, leaseEnd), 'NX', 'PX', lease + delay) then
  if mode == 'q' then
    leaveQueue(KEYS[3], KEYS[4], owner)
  end
  return {ACQUIRED, fence}
end
local current = redis.call('GET', KEYS[1])
local kind = sharedKind(current)
if kind and kind ~= 'r' then
  return {OTHER_KIND, permitsOf(kind)}
end
local held = exclusiveDelay(current)
if ownedBy(current, owner) and leaseLasts(current) then
  local granted, heldCap = string.match(current, '^[^:]*:(%d+):(%d+)')
  local ttl = lease
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
  if mode == 'q' then
    leaveQueue(KEYS[3], KEYS[4], owner)
  end
  return {ACQUIRED, tonumber(granted), ttl}
end
local queues = mode == 'q' or mode == 'n'
if queues and KEYS[4] then
  local entryMillis, handOffLease, channel = string.match(ARGV[3], '^.:(%d+):(%d*):(.*)$')
  joinQueue(KEYS[3], KEYS[4], owner, serverMillis(), tonumber(entryMillis),
    (handOffLease ~= '') and handOffLease or ARGV[2], ARGV[4] or '0', 'x', channel, delay)
end
if queues or mode == 'w' then
  markWaited(KEYS[1], current)
end
return {HELD, redis.call('PTTL', KEYS[1]), 0, fence}
