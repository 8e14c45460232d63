-- Acquires one lock: SET key "<owner>:<fence>" NX PX lease, with a fencing token.
-- KEYS[1]  lock key
-- KEYS[2]  fencing counter of the lock name (one per name, never expires)
-- ARGV[1]  owner token (128-bit random, hex)
-- ARGV[2]  lease in milliseconds
-- Returns  {1, fence}  acquired; also when the key already holds this owner token (a replayed
--                      or retried acquire), in which case the lease is refreshed and the
--                      original fencing token returned
--          {0, pttl}   held by another owner; pttl = its remaining lease in ms
-- The fencing token is max(counter + 1, server time in microseconds): strictly increasing per
-- name, and still increasing when Redis restarts without the counter.
local current = redis.call('GET', KEYS[1])
if current then
  local prefix = ARGV[1] .. ':'
  if string.sub(current, 1, #prefix) == prefix then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, tonumber(string.sub(current, #prefix + 1))}
  end
  return {0, redis.call('PTTL', KEYS[1])}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now)
local text = string.format('%.0f', fence)
redis.call('SET', KEYS[2], text)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text, 'PX', ARGV[2])
return {1, fence}
