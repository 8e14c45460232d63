-- The uncontended acquire of one exclusive key (acquire.lua's KEYS and ARGV) in its commonest
-- case, before the libraries are defined: no max hold, no lock delay, and not an attempt that
-- must leave a queue entry ('q', byte 113). The fencing counter is incremented here; when the
-- key is free (SET NX), it is the owner's with that token, as acquire.lua would set it
-- ("<owner>:<fence>:0", exclusiveValue in lib.lua), and the reply is the token alone: a bare
-- integer (> 1), which says what {ACQUIRED, fence} says and spares Redis an array reply (about
-- 5,600 instructions of its own per call, counted with callgrind: docs/benchmarks.md). Redis
-- defines every library function again on each run, which this case then does not pay. A
-- waiter's first attempt ('n', byte 110) that finds the key another owner's exclusive value
-- (no '|': not a share) joins the queue here too and marks the key as waited for, as
-- acquire.lua would (joinQueue and markWaited in lib-acquire.lua), and gets {HELD, pttl, 0,
-- fence}: under contention, the attempt of each waiter that becomes the head of its client's
-- local queue. A counter that was missing (INCR gave 1: it must be seeded, see nextFence) or any
-- other key that is taken go on to acquire.lua, which is given the counter's new value
-- (plainIncr; nil when not incremented here).
-- Tokens and times are written as decimal() in lib.lua writes them.
local plainIncr = nil
local plainMode = string.byte(ARGV[3] or '')
if (ARGV[4] == nil or ARGV[4] == '0') and (ARGV[5] == nil or ARGV[5] == '0') and plainMode ~= 113 then
  plainIncr = redis.call('INCR', KEYS[2])
  if plainIncr > 1 then
    local low = plainIncr % 1e8
    local fence = (plainIncr < 1e8) and string.format('%d', plainIncr)
      or string.format('%d%08d', (plainIncr - low) / 1e8, low)
    if redis.call('SET', KEYS[1], ARGV[1] .. ':' .. fence .. ':0', 'NX', 'PX', ARGV[2]) then
      return plainIncr
    end
    -- a first attempt that queues, finding the key another owner's exclusive value
    local current = (plainMode == 110 and KEYS[4]) and redis.call('GET', KEYS[1])
    local entryMillis, handOffLease, channel
    if current and not string.find(current, '|', 1, true)
        and string.sub(current, 1, #ARGV[1] + 1) ~= ARGV[1] .. ':' then
      entryMillis, handOffLease, channel = string.match(ARGV[3], '^.:(%d+):(%d*):(.*)$')
    end
    if entryMillis then
      local time = redis.call('TIME')
      local expires = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(entryMillis)
      local rest = expires % 1e8
      local entry = ((expires < 1e8) and string.format('%d', expires)
        or string.format('%d%08d', (expires - rest) / 1e8, rest)) .. ':'
        .. ((handOffLease ~= '') and handOffLease or ARGV[2]) .. ':0:x:' .. channel
      if redis.call('HSET', KEYS[4], ARGV[1], entry) == 1 then
        redis.call('RPUSH', KEYS[3], ARGV[1])
      end
      redis.call('PEXPIRE', KEYS[3], entryMillis + 60000)
      redis.call('PEXPIRE', KEYS[4], entryMillis + 60000)
      if string.sub(current, -2) ~= ':w' then
        redis.call('SET', KEYS[1], current .. ':w', 'KEEPTTL')
      end
      return {0, redis.call('PTTL', KEYS[1]), 0, plainIncr}
    end
  end
end
