-- Redlock: raises the fencing counters of the keys one owner holds to the lock's fencing token
-- (the highest token among the nodes that granted it), so that every later grant on this node
-- issues a higher one. Only while the owner holds the key here: a counter is never raised for a
-- lock this node no longer grants to the owner.
-- KEYS[1..n]     lock keys
-- KEYS[n+1..2n]  the fencing counter serving each lock key, in the same order
-- ARGV[1]        owner token
-- ARGV[2..n+1]   the lock's fencing token of each key, in the same order
-- Returns        the number of keys that hold the owner's token here (their counters are now at
--                least the given tokens)
local n = #KEYS / 2
local held = 0
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current and ownedBy(current, ARGV[1]) then
    local token = tonumber(ARGV[i + 1])
    if token > tonumber(redis.call('GET', KEYS[n + i]) or '0') then
      redis.call('SET', KEYS[n + i], decimal(token))
    end
    held = held + 1
  end
end
return held
