-- The release of one key (release.lua's KEYS and ARGV) in its commonest cases, before the
-- libraries are defined; Redis defines every library function again on each run, which these
-- cases then do not pay. Any other value goes on to release.lua, which is given the value read
-- here (plainRead; false when the key is missing, nil when not read).
-- 1. The key holds this owner's plain exclusive value "<owner>:<fence>:<cap>" (no waiter's mark,
--    no lock delay, not a share): it is deleted and counted, as free() in lib-release.lua would.
--    The owner's token (hex, see OwnerTokens) is compared in place, and only what follows it is
--    matched: no string is made for the comparison.
-- 2. A reader without a lock delay leaves other readers ("r|...", see lib-shared.lua), one of
--    which holds a lease that ends no earlier than the owner's (its lease end, plus its lock
--    delay). The key's TTL is the latest such end of the holders in the value (every script
--    that writes one sets it so), so it stays as it is; that holder stays, so the key is
--    neither freed nor handed off. The owner's part is cut out of the value and the TTL kept, as
--    leaveShare() in lib-release.lua would leave it but for holders whose lease ended, which the
--    next script that reads the holders drops. Only the owner's part is read in full, and the
--    others until one such holder: at a reader's release, reading every holder is most of the
--    work, and readers let in together end together.
local plainRead = nil
if #KEYS == 4 then
  plainRead = redis.call('GET', KEYS[1])
  local at = #ARGV[1] + 1
  if plainRead and string.byte(plainRead, at) == 58 and string.find(plainRead, ARGV[1], 1, true) == 1
      and string.find(plainRead, '^%d+:%d+$', at + 1) then
    redis.call('DEL', KEYS[1])
    return 1
  end
  -- "r|" (bytes 114, 124)
  if plainRead and string.byte(plainRead, 1) == 114 and string.byte(plainRead, 2) == 124 then
    local from = string.find(plainRead, '|' .. ARGV[1] .. ',', 2, true)
    local to = from and string.find(plainRead, '|', from + 1, true)
    local bodyEnd = #plainRead
    if string.sub(plainRead, -2) == ':w' then
      bodyEnd = bodyEnd - 2
    end
    local mine = from and string.match(string.sub(plainRead, from + at + 1, (to or bodyEnd + 1) - 1), '^%d+,(%d+),%d+$')
    local expires = mine and tonumber(mine)
    local part = 2
    while expires and expires > 0 and part do
      if part ~= from then
        local _, _, ends, delay = string.find(plainRead, '^|[^,|]+,%d+,(%d+),%d+,?(%d*)%f[|:%z]', part)
        if ends and tonumber(ends) + (tonumber(delay) or 0) >= expires then
          redis.call('SET', KEYS[1], string.sub(plainRead, 1, from - 1) .. string.sub(plainRead, to or bodyEnd + 1),
            'KEEPTTL')
          return 1
        end
      end
      part = string.find(plainRead, '|', part + 1, true)
    end
  end
end
