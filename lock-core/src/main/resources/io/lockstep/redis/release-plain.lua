-- The release of one key (release.lua's KEYS and ARGV) in its commonest case, before the
-- libraries are defined: the key holds this owner's plain exclusive value "<owner>:<fence>:<cap>"
-- (no waiter's mark, no lock delay, not a share), so it is deleted and counted, as free() in
-- lib-release.lua would; Redis defines every library function again on each run, which this
-- case then does not pay. Any other value goes on to release.lua, which is given the value read
-- here (plainRead; false when the key is missing, nil when not read).
-- The owner's token (hex, see OwnerTokens) is compared in place, and only what follows it
-- is matched: no string is made for the comparison.
local plainRead = nil
if #KEYS == 4 then
  plainRead = redis.call('GET', KEYS[1])
  local at = #ARGV[1] + 1
  if plainRead and string.byte(plainRead, at) == 58 and string.find(plainRead, ARGV[1], 1, true) == 1
      and string.find(plainRead, '^%d+:%d+$', at + 1) then
    redis.call('DEL', KEYS[1])
    return 1
  end
end
