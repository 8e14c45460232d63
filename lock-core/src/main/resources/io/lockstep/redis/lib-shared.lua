-- Keys held by readers or permit holders (lib.lua comes before it). Such a key holds
--   "<kind>|<owner>,<fence>,<expires>,<cap>|<owner>,<fence>,<expires>,<cap>..."
-- where <kind> is "r" (readers) or "s<n>" (a semaphore of n permits), <expires> is the server
-- time (ms) at which that holder's lease ends (0: with the key's own TTL, for the first holder
-- until another one joins) and <cap> its max-hold cap (0: none); a holder with a lock delay has
-- ",<delay>" (ms) after its cap, and the value ":w" at its end while someone waits for the key.
-- The key's TTL is the latest <expires> (plus its holder's delay): a holder whose process died
-- frees its share when its own lease ends, or its delay after (it is dropped by the next script
-- that reads the holders), and the key expires with the last.

-- kind, holders ({owner, fence, expires, cap, delay} each), waited
local function parseShared(value)
  local waited = isWaited(value)
  if waited then
    value = string.sub(value, 1, -3)
  end
  local holders = {}
  for part in string.gmatch(value, '|([^|]+)') do
    local owner, fence, expires, cap, delay = string.match(part, '^([^,]+),(%d+),(%d+),(%d+),?(%d*)$')
    if owner then
      holders[#holders + 1] = {owner, tonumber(fence), tonumber(expires), tonumber(cap), tonumber(delay) or 0}
    end
  end
  return string.match(value, '^([^|]*)'), holders, waited
end

local function formatShared(kind, holders, waited)
  local parts = {kind}
  for _, h in ipairs(holders) do
    local part = h[1] .. ',' .. decimal(h[2]) .. ',' .. decimal(h[3]) .. ','
      .. decimal(h[4])
    if (h[5] or 0) > 0 then
      part = part .. ',' .. decimal(h[5])
    end
    parts[#parts + 1] = part
  end
  local value = table.concat(parts, '|')
  if waited then
    value = value .. ':w'
  end
  return value
end

-- The holders whose lease, or lock delay after it, has not ended (an expiry of 0 becomes the
-- key's, less the holder's delay), and the latest moment the key must live until for them.
-- A holder in its delay still counts (a writer waits for it, a permit stays taken), but no
-- longer holds its share (see holderLasts).
local function liveHolders(key, holders, now)
  local ttl = nil
  local live = {}
  local latest = 0
  for _, h in ipairs(holders) do
    h[5] = h[5] or 0
    if h[3] == 0 then
      if not ttl then
        ttl = redis.call('PTTL', key)
      end
      h[3] = now + math.max(ttl, 0) - h[5]
    end
    if h[3] + h[5] > now then
      live[#live + 1] = h
      latest = math.max(latest, h[3] + h[5])
    end
  end
  return live, latest
end

-- Whether a holder's own lease lasts (not ended, nor in its lock delay); for holders that
-- liveHolders returned (an expiry of 0 resolved).
local function holderLasts(h, now)
  return h[3] > now
end

-- Writes the holders back, the key living until the latest of their leases.
local function storeShared(key, kind, holders, waited, latest, now)
  redis.call('SET', key, formatShared(kind, holders, waited), 'PX', math.max(1, latest - now))
end

-- The holder entry of an owner, or nil.
local function holderOf(holders, owner)
  for _, h in ipairs(holders) do
    if h[1] == owner then
      return h
    end
  end
  return nil
end

-- The owner's entry among a shared value's holders, nil when it has none or is in its lock
-- delay (its lease ended).
local function heldShare(key, value, owner)
  local _, holders = parseShared(value)
  local mine = holderOf(holders, owner)
  if mine and mine[5] > 0 then
    mine = holderOf(liveHolders(key, holders, serverMillis()), owner)
    mine = (mine and holderLasts(mine, serverMillis())) and mine or nil
  end
  return mine
end
