-- Confirms that one owner still holds its locks; changes nothing.
-- KEYS[1..n]  lock keys
-- ARGV[1]     owner token
-- Returns     the number of keys that hold this owner token now
local prefix = ARGV[1] .. ':'
local held = 0
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and string.sub(current, 1, #prefix) == prefix then
    held = held + 1
  end
end
return held
