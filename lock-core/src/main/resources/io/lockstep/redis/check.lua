-- Confirms that one owner still holds its locks; changes nothing.
-- KEYS[1..n]  lock keys
-- ARGV[1]     owner token
-- Returns     the number of keys that hold this owner token now (as their exclusive holder or
--             as one of their readers or permit holders, see holders.lua)
local prefix = ARGV[1] .. ':'
local held = 0
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and string.sub(current, 1, #prefix) == prefix then
    -- not while the key is in its lock delay: the lease ended
    if leaseLasts(current, serverMillis) then
      held = held + 1
    end
  elseif current and holdsShare(current, ARGV[1]) then
    -- a reader's or permit holder's share, while its own lease lasts
    local _, holders = parseShared(current)
    local mine = holderOf(holders, ARGV[1])
    if mine and mine[5] > 0 then
      -- with a lock delay: not while in it
      local now = serverMillis()
      mine = holderOf(liveHolders(KEYS[i], holders, now), ARGV[1])
      mine = (mine and holderLasts(mine, now)) and mine or nil
    end
    if mine and (mine[3] == 0 or mine[3] > serverMillis()) then
      held = held + 1
    end
  end
end
return held
