-- Releases one owner's locks: compare-and-delete, never a plain DEL. A key marked as waited for
-- (":w" at the end of its value, see acquire.lua) is handed directly to the first live waiter of
-- its queue (a fresh lease and fencing token, told on its own channel; readers first in line are
-- handed it together, and permit holders as many as the semaphore admits) or, when no one is
-- queued, deleted with a release notification on the key's channel; an unmarked key is just
-- deleted. A key held by readers or permit holders loses this owner's share; the last holder to
-- leave frees it as above (lib-release.lua).
-- KEYS[1..n]      lock keys
-- KEYS[n+1..2n]   the waiter queue of each lock key
-- KEYS[2n+1..3n]  the waiter table of each lock key
-- KEYS[3n+1..4n]  the fencing counter of each lock key
-- ARGV            owner token, notification, publish command, successor and its lease (see
--                 lib-release.lua)
-- Returns         the number of keys released or handed off; a key that expired or belongs to
--                 another owner is left untouched, and one in its lock delay is not counted; the
--                 fencing token negated when release-plain.lua handed the key to the successor
-- Runs after release-plain.lua, which releases a single plain key itself and passes on the
-- value it read (plainRead), and the fencing counter it incremented (plainFence).
local n = #KEYS / 4
if plainFence ~= nil then
  -- the counter was missing: seeded here, as nextFence would have seeded it (then incremented
  -- for the hand-off)
  fenceAfter(KEYS[4], plainFence)
end
local released = 0
for i = 1, n do
  local k = {key = KEYS[i], queue = KEYS[n + i], table = KEYS[2 * n + i], counter = KEYS[3 * n + i]}
  local current = plainRead
  if i > 1 or current == nil then
    current = redis.call('GET', k.key)
  end
  released = released + release(k, current)
end
return released
