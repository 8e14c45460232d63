-- The floor's release: compare-and-delete.
-- KEYS[1]  lock key
-- ARGV[1]  owner token of the acquisition being released
-- Returns  1 deleted, 0 the key expired or belongs to another owner (left untouched)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
