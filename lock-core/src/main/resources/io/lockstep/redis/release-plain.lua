-- The release of one key (release.lua's KEYS and ARGV) in its commonest cases, before the
-- libraries are defined; Redis defines every library function again on each run, which these
-- cases then do not pay. Any other value goes on to release.lua, which is given the value read
-- here (plainRead; false when the key is missing, nil when not read) and the fencing counter's
-- value when this script incremented it (plainFence, else nil).
-- 1. The key holds this owner's plain exclusive value "<owner>:<fence>:<cap>" (no waiter's mark,
--    no lock delay, not a share): it is deleted and counted, as free() in lib-release.lua would.
--    The owner's token (hex, see OwnerTokens) is compared in place, and only what follows it is
--    matched: no string is made for the comparison. When the release names a successor (ARGV[4],
--    a waiter of the same client, with its hand-off lease in ARGV[5]), the key is handed to it
--    instead: "<successor>:<fence>:0" for that lease, as its own first attempt would have taken
--    the free key, and the reply is the fence negated (no one is told: the releasing client tells
--    its waiter); a queue entry of the successor's own, left by an earlier attempt, is taken off.
-- 2. The key holds this owner's exclusive value marked as waited for ("...:w", no lock delay), and
--    the first entry of its queue is a live exclusive waiter without max hold or lock delay
--    ("<expires>:<lease>:0:x:<channel>", see joinQueue in lib-acquire.lua): the key is handed
--    to it as handOff() in lib-release.lua would ("<waiter>:<fence>:0:w" for the hand-off
--    lease, the entry taken off, the waiter told on its channel). When the queue is empty, no
--    writer on several keys marked the key for itself ("~w" in the table) and the release names
--    a successor, the key is handed to it as in case 1, its mark kept ("<successor>:<fence>:0:w":
--    whoever marked it is told when it is freed). A writer's mark on several keys does not keep
--    the key from an exclusive waiter first in line. When the fencing counter was missing (INCR
--    gave 1), release.lua seeds it (plainFence) and hands off the next token (the seed itself is
--    not issued); a successor named is then not handed the key, which release.lua frees.
-- 3. A reader without a lock delay leaves other readers ("r|...", see lib-shared.lua), one of
--    which holds a lease that ends no earlier than the owner's (its lease end, plus its lock
--    delay). The key's TTL is the latest such end of the holders in the value (every script
--    that writes one sets it so), so it stays as it is; that holder stays, so the key is
--    neither freed nor handed off. The owner's part is cut out of the value and the TTL kept, as
--    leaveShare() in lib-release.lua would leave it but for holders whose lease ended, which the
--    next script that reads the holders drops. Only the owner's part is read in full, and the
--    others until one such holder: at a reader's release, reading every holder is most of the
--    work, and readers let in together end together.
local plainRead = nil
local plainFence = nil
if #KEYS == 4 then
  plainRead = redis.call('GET', KEYS[1])
  local at = #ARGV[1] + 1
  -- whether the value begins with this owner's token and a colon (compared once, in place)
  local mine = plainRead and string.byte(plainRead, at) == 58 and string.find(plainRead, ARGV[1], 1, true) == 1
  -- the key goes to: the successor named (case 1, or case 2 with no one queued) or the queue's
  -- first waiter (case 2)
  local waiter, lease, channel, mark
  if mine and string.find(plainRead, '^%d+:%d+$', at + 1) then
    if not ARGV[4] then
      redis.call('DEL', KEYS[1])
      return 1
    end
    waiter, lease, mark = ARGV[4], ARGV[5], ''
  end
  -- this owner's, waited for, handed to the queue's first entry when that is a plain exclusive one
  if mine and (ARGV[2] or 'released') ~= '' and string.find(plainRead, '^%d+:%d+:w$', at + 1) then
    local first = redis.call('LINDEX', KEYS[2], 0)
    local entry = first and redis.call('HGET', KEYS[3], first)
    local expires, entryLease, entryChannel
    if entry then
      expires, entryLease, entryChannel = string.match(entry, '^(%d+):(%d+):0:x:(.*)$')
    end
    if expires and not string.find(entryChannel, '^d%d+:') then
      local time = redis.call('TIME')
      if tonumber(expires) > tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) then
        waiter, lease, channel = first, entryLease, entryChannel
      end
    elseif not first and ARGV[4] and redis.call('HEXISTS', KEYS[3], '~w') == 0 then
      -- no one queued, and no writer on several keys marked it for itself ("~w")
      waiter, lease = ARGV[4], ARGV[5]
    end
    mark = ':w'
  end
  if waiter then
    plainFence = redis.call('INCR', KEYS[4])
    if plainFence > 1 then
      local low = plainFence % 1e8
      local fence = (plainFence < 1e8) and string.format('%d', plainFence)
        or string.format('%d%08d', (plainFence - low) / 1e8, low)
      redis.call('SET', KEYS[1], waiter .. ':' .. fence .. ':0' .. mark, 'PX', lease)
      if not channel then
        -- an entry the successor's own earlier attempt left in the queue goes with it
        if redis.call('HDEL', KEYS[3], waiter) == 1 then
          redis.call('LREM', KEYS[2], 0, waiter)
        end
        return -plainFence
      end
      redis.call('LPOP', KEYS[2])
      redis.call('HDEL', KEYS[3], waiter)
      redis.pcall(ARGV[3] or 'PUBLISH', channel, 'g:' .. waiter .. ':' .. fence .. ':' .. lease .. ':' .. KEYS[1])
      return 1
    end
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
