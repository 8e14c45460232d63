-- Renews the leases of many held locks in one round trip: token-checked PEXPIRE per key.
-- KEYS[1..n]  lock keys
-- ARGV[2i-1]  the owner token of KEYS[i]
-- ARGV[2i]    the new lease of KEYS[i] in milliseconds
-- Returns     {r1, ..., rn}: 1 renewed, 0 the key is gone or held by another owner (lost)
local result = {}
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  local prefix = ARGV[2 * i - 1] .. ':'
  if current and string.sub(current, 1, #prefix) == prefix then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
