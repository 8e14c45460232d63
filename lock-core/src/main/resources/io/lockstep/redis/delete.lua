-- Releases one owner's locks without hand-offs: compare-and-delete, never a plain DEL, a
-- notification on the key's channel when it was marked as waited for (see acquire.lua). For
-- Redlock's nodes, a store without hand-offs, and undoing a failed attempt (an empty
-- notification: nobody is told, nothing handed off). A key held by readers or permit holders
-- loses this owner's share; the last holder to leave deletes it (lib-release.lua).
-- KEYS[1..n]  lock keys
-- ARGV        owner token, notification, publish command (see lib-release.lua)
-- Returns     the number of keys released; a key that expired or belongs to another owner is
--             left untouched, and one in its lock delay is not counted
local released = 0
for i = 1, #KEYS do
  released = released + release({key = KEYS[i]}, redis.call('GET', KEYS[i]))
end
return released
