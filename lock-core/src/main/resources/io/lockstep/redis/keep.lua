-- Leaves one owner's locks to expire when their minimum hold passes, instead of deleting them:
-- token-checked; sets each key's lease to ARGV[2] and lowers its cap to the same moment, so that
-- a renewal already on its way cannot extend it (renew.lua honours the cap); never past the
-- key's own max-hold cap. Publishes nothing: the keys are still taken.
-- KEYS[1..n]  lock keys
-- ARGV[1]     owner token
-- ARGV[2]     what remains of the minimum hold, in milliseconds (> 0)
-- Returns     the number of keys that held this owner token (each now expiring by ARGV[2], or
--             earlier by its cap); a key that expired or belongs to another owner is left untouched
local owner = ARGV[1]
local now = serverMillis()
local kept = 0
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and holdsShare(current, owner) then
    -- a reader's or permit holder's share: its own lease and cap end then
    local kind, holders, waited = parseShared(current)
    holders = liveHolders(KEYS[i], holders, now)
    local mine = holderOf(holders, owner)
    if mine and holderLasts(mine, now) then
      local ends = now + tonumber(ARGV[2])
      if mine[4] > 0 and mine[4] < ends then
        ends = mine[4]
      end
      changed(mine)[3] = ends
      mine[4] = ends
      -- kept, then released: no lock delay after it
      mine[5] = 0
      storeShared(KEYS[i], kind, holders, waited, latestEnd(holders), now)
      kept = kept + 1
    end
  elseif current and ownedBy(current, owner) and leaseLasts(current) then
    local head, cap, rest = string.match(current, '^([^:]*:%d+):(%d+)(.*)$')
    if exclusiveDelay(current) then
      -- kept, then released: no lock delay after it
      rest = (string.sub(rest, -2) == ':w') and ':w' or ''
    end
    local ends = now + tonumber(ARGV[2])
    cap = tonumber(cap)
    if cap > 0 and cap < ends then
      ends = cap
    end
    if ends > now then
      redis.call('SET', KEYS[i], head .. ':' .. decimal(ends) .. rest, 'PX', ends - now)
    end
    kept = kept + 1
  end
end
return kept
