-- Acquires one lock: SET key "<owner>:<fence>:<cap>" NX PX lease, with a fencing token.
-- KEYS[1]  lock key
-- KEYS[2]  fencing counter (never expires)
-- ARGV[1]  owner token (128-bit random, hex)
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  max hold in milliseconds, 0 for none: <cap> = server time (ms) + max hold, and no
--          renewal extends the key past it
-- Returns  {1, fence}  acquired; also when the key already holds this owner token (a replayed
--                      or retried acquire), in which case the lease is refreshed (within the
--                      cap) and the original fencing token returned
--          {0, pttl}   held by another owner; pttl = its remaining lease in ms
-- The fencing token is max(counter + 1, server time in microseconds): strictly increasing for
-- every key served by the counter, and still increasing when Redis restarts without it.
local current = redis.call('GET', KEYS[1])
if current then
  local prefix = ARGV[1] .. ':'
  if string.sub(current, 1, #prefix) == prefix then
    local fence, cap = string.match(current, '^[^:]*:(%d+):(%d+)$')
    local ttl = tonumber(ARGV[2])
    if tonumber(cap) > 0 then
      local time = redis.call('TIME')
      ttl = math.min(ttl, tonumber(cap) - (tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)))
    end
    if ttl > 0 then
      redis.call('PEXPIRE', KEYS[1], ttl)
    end
    return {1, tonumber(fence)}
  end
  return {0, redis.call('PTTL', KEYS[1])}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now)
local text = string.format('%.0f', fence)
local cap = 0
if tonumber(ARGV[3]) > 0 then
  cap = math.floor(now / 1000) + tonumber(ARGV[3])
end
redis.call('SET', KEYS[2], text)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text .. ':' .. string.format('%.0f', cap), 'PX', ARGV[2])
return {1, fence}
