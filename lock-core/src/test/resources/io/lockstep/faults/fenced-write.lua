-- A fenced register in the never-faulted ledger Redis: storage that checks fencing tokens.
-- KEYS[1]  the highest token accepted so far
-- KEYS[2]  the register's value
-- KEYS[3]  count of stale writes accepted (a token lower than one accepted before, or equal to
--          one another writer used)
-- KEYS[4]  count of stale writes rejected
-- KEYS[5]  the writer that used the highest token
-- ARGV[1]  the writer's fencing token
-- ARGV[2]  the value to write
-- ARGV[3]  '1': reject a stale token; '0': accept every write (the unprotected control),
--          counting the stale ones
-- ARGV[4]  the writer (one lock holder; a token is never shared by two holders)
-- Returns  1 written, 0 rejected
local token = tonumber(ARGV[1])
local highest = tonumber(redis.call('GET', KEYS[1]) or '-1')
local stale = token < highest or (token == highest and redis.call('GET', KEYS[5]) ~= ARGV[4])
if stale then
  if ARGV[3] == '1' then
    redis.call('INCR', KEYS[4])
    return 0
  end
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[2], ARGV[2])
  return 1
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[5], ARGV[4])
redis.call('SET', KEYS[2], ARGV[2])
return 1
