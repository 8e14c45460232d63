-- The release of one key (release.lua's KEYS and ARGV) in its commonest case, before the
-- libraries are defined: the key holds this owner's plain exclusive value "<owner>:<fence>:<cap>"
-- (no waiter's mark, no lock delay, not a share), so it is deleted and counted, as free() in
-- lib-release.lua would; Redis defines every library function again on each run, which this
-- case then does not pay. Any other value goes on to release.lua, which is given the value read
-- here (plainRead; false when the key is missing, nil when not read).
local plainRead = nil
if #KEYS == 4 then
  plainRead = redis.call('GET', KEYS[1])
  if plainRead and string.sub(plainRead, 1, #ARGV[1] + 1) == ARGV[1] .. ':'
      and string.find(plainRead, '^[^:|]*:%d+:%d+$') then
    redis.call('DEL', KEYS[1])
    return 1
  end
end
