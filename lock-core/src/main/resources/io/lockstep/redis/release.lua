-- Releases locks held by one owner and tells waiters: compare-and-delete, never a plain DEL.
-- KEYS[1..n]  lock keys
-- ARGV[1]     owner token
-- ARGV[2]     optional: the message published for each deleted key ('released' when absent);
--             empty: publish nothing (Redlock undoing a failed attempt, which frees no lock)
-- ARGV[3]     optional: the publish command, PUBLISH (default) or SPUBLISH (sharded, Cluster)
-- Returns     the number of keys deleted; a key that expired or belongs to another owner is
--             left untouched. Each deleted key is published on the channel of the same name;
--             where the ACL forbids that channel the release still succeeds (waiters poll).
local prefix = ARGV[1] .. ':'
local message = ARGV[2] or 'released'
local released = 0
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and string.sub(current, 1, #prefix) == prefix then
    redis.call('DEL', KEYS[i])
    if message ~= '' then
      redis.pcall(ARGV[3] or 'PUBLISH', KEYS[i], message)
    end
    released = released + 1
  end
end
return released
