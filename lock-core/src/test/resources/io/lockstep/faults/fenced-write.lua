-- A fenced register in the never-faulted ledger Redis: storage that checks fencing tokens.
-- KEYS[1]  the highest token accepted so far
-- KEYS[2]  the register's value
-- KEYS[3]  count of stale writes accepted (a token lower than one accepted before)
-- KEYS[4]  count of stale writes rejected
-- ARGV[1]  the writer's fencing token
-- ARGV[2]  the value to write
-- ARGV[3]  '1': reject a token lower than the highest seen; '0': accept every write (the
--          unprotected control), counting the stale ones
-- Returns  1 written, 0 rejected
local token = tonumber(ARGV[1])
local highest = tonumber(redis.call('GET', KEYS[1]) or '-1')
if token < highest then
  if ARGV[3] == '1' then
    redis.call('INCR', KEYS[4])
    return 0
  end
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[2], ARGV[2])
  return 1
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return 1
