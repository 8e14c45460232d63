-- Renews the leases of many held locks in one round trip: token-checked PEXPIRE per key,
-- never past the key's max-hold cap.
-- KEYS[1..n]  lock keys
-- ARGV[2i-1]  the owner token of KEYS[i]
-- ARGV[2i]    the new lease of KEYS[i] in milliseconds
-- Returns     {r1, ..., rn}: the lease granted in ms (> 0); 0 the key is gone or held by
--             another owner (lost); -1 the cap allows no extension (the key expires by it)
local now = nil
local result = {}
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  local prefix = ARGV[2 * i - 1] .. ':'
  if current and string.sub(current, 1, #prefix) == prefix then
    local ttl = tonumber(ARGV[2 * i])
    local cap = tonumber(string.match(current, '^[^:]*:%d+:(%d+)'))
    if cap and cap > 0 then
      if not now then
        local time = redis.call('TIME')
        now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
      end
      ttl = math.min(ttl, cap - now)
    end
    if ttl > 0 then
      redis.call('PEXPIRE', KEYS[i], ttl)
      result[i] = ttl
    else
      result[i] = -1
    end
  else
    result[i] = 0
  end
end
return result
