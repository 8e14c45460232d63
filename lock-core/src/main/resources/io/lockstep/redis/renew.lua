-- Renews the leases of many held locks in one round trip: token-checked PEXPIRE per key,
-- never past the key's max-hold cap.
-- KEYS[1..n]  lock keys
-- ARGV[2i-1]  the owner token of KEYS[i]
-- ARGV[2i]    the new lease of KEYS[i] in milliseconds
-- A share of a key held by readers or permit holders (lib-shared.lua) is renewed on its own.
-- Returns     {r1, ..., rn}: the lease granted in ms (> 0); LOST (0) the key is gone or held by
--             another owner, or its lease ended and it is in its lock delay; CAPPED (-1) the
--             cap allows no extension (the key expires by it, plus its lock delay)
local LOST = 0
local CAPPED = -1

-- Renews one share of a key held by readers or permit holders (lib-shared.lua): its own
-- lease within its own cap; the key lives until the latest lease.
local function renewShare(key, current, owner, asked)
  local kind, holders, waited = parseShared(current)
  local now = serverMillis()
  holders = liveHolders(key, holders, now)
  local mine = holderOf(holders, owner)
  if not mine or not holderLasts(mine, now) then
    return LOST
  end
  local ttl = asked
  if mine[4] > 0 then
    ttl = math.min(ttl, mine[4] - now)
  end
  if ttl <= 0 then
    return CAPPED
  end
  changed(mine)[3] = now + ttl
  -- a renewal may ask for less than the lease has left: the latest end may be another's now
  storeShared(key, kind, holders, waited, latestEnd(holders), now)
  return ttl
end

local result = {}
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if current and holdsShare(current, ARGV[2 * i - 1]) then
    result[i] = renewShare(KEYS[i], current, ARGV[2 * i - 1], tonumber(ARGV[2 * i]))
  elseif current and ownedBy(current, ARGV[2 * i - 1]) and leaseLasts(current) then
    local ttl = tonumber(ARGV[2 * i])
    local cap = tonumber(string.match(current, '^[^:]*:%d+:(%d+)'))
    if cap and cap > 0 then
      ttl = math.min(ttl, cap - serverMillis())
    end
    local delay = exclusiveDelay(current)
    if ttl > 0 and delay then
      redis.call('SET', KEYS[i], withLeaseEnd(current, serverMillis() + ttl), 'PX', ttl + delay)
      result[i] = ttl
    elseif ttl > 0 then
      redis.call('PEXPIRE', KEYS[i], ttl)
      result[i] = ttl
    else
      result[i] = CAPPED
    end
  else
    result[i] = LOST
  end
end
return result
