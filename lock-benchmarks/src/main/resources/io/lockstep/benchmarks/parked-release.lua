-- The parked floor's release: compare, then hand the key to the first queued token and tell it,
-- or delete the key when no one waits.
-- KEYS[1]  lock key
-- KEYS[2]  the key's queue of waiting tokens
-- ARGV[1]  owner token of the acquisition being released
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  the channel the waiters' clients hear
-- Returns  1 released, 0 the key expired or belongs to another owner (left untouched)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local next = redis.call('LPOP', KEYS[2])
if next then
  redis.call('SET', KEYS[1], next, 'PX', ARGV[2])
  redis.call('PUBLISH', ARGV[3], next)
else
  redis.call('DEL', KEYS[1])
end
return 1
