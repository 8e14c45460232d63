-- The floor's acquire: one SET NX PX, nothing else (no fencing, no reentrancy, no notification).
-- KEYS[1]  lock key
-- ARGV[1]  owner token, unique per acquisition
-- ARGV[2]  lease in milliseconds
-- Returns  1 acquired, 0 held by someone else
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
