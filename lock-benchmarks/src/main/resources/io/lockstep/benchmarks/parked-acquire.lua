-- The parked floor's acquire: SET NX PX, or else the token joins the key's queue and its caller
-- sleeps until a release hands the key to it (no fencing, reentrancy or renewal).
-- KEYS[1]  lock key
-- KEYS[2]  the key's queue of waiting tokens
-- ARGV[1]  owner token, unique per acquisition
-- ARGV[2]  lease in milliseconds
-- Returns  1 acquired, 0 queued
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
redis.call('RPUSH', KEYS[2], ARGV[1])
return 0
