-- Confirms that one owner still holds its locks; changes nothing.
-- KEYS[1..n]  lock keys
-- ARGV[1]     owner token
-- Returns     the number of keys that hold this owner token now (as their exclusive holder or
--             as one of their readers or permit holders, see lib-shared.lua), not in its lock delay
--             (the lease ended)
local owner = ARGV[1]
local held = 0
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and ownedBy(current, owner) then
    if leaseLasts(current) then
      held = held + 1
    end
  elseif current and holdsShare(current, owner) then
    -- a reader's or permit holder's share, while its own lease lasts
    local mine = heldShare(KEYS[i], current, owner)
    if mine and (mine[3] == 0 or mine[3] > serverMillis()) then
      held = held + 1
    end
  end
end
return held
