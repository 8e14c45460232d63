-- Keys held by readers or permit holders (lib.lua comes before it). Such a key holds
--   "<kind>|<owner>,<fence>,<expires>,<cap>|<owner>,<fence>,<expires>,<cap>..."
-- where <kind> is "r" (readers) or "s<n>" (a semaphore of n permits), <expires> is the server
-- time (ms) at which that holder's lease ends (0: with the key's own TTL, for the first holder
-- until another one joins) and <cap> its max-hold cap (0: none); a holder with a lock delay has
-- ",<delay>" (ms) after its cap, and the value ":w" at its end while someone waits for the key.
-- The key's TTL is the latest <expires> (plus its holder's delay): a holder whose process died
-- frees its share when its own lease ends, or its delay after (it is dropped by the next script
-- that reads the holders), and the key expires with the last.

-- kind, holders ({owner, fence, expires, cap, delay, text} each: text is the holder's part of
-- the value as read, which formatShared writes back as it is unless a change dropped it, see
-- changed), waited. One pattern over the whole value, each part up to the next '|' or the end.
local function parseShared(value)
  local waited = isWaited(value)
  if waited then
    value = string.sub(value, 1, -3)
  end
  local holders = {}
  for part, owner, fence, expires, cap, delay
      in string.gmatch(value, '|(([^,|]+),(%d+),(%d+),(%d+),?(%d*))%f[|%z]') do
    holders[#holders + 1] = {owner, tonumber(fence), tonumber(expires), tonumber(cap), tonumber(delay) or 0, part}
  end
  return string.match(value, '^([^|]*)'), holders, waited
end

-- A holder's fields changed: formatShared writes its part anew. Whoever changes a holder read
-- by parseShared calls this (its text would write the old fields back).
local function changed(h)
  h[6] = nil
  return h
end

-- A holder's part of the value, "<owner>,<fence>,<expires>,<cap>[,<delay>]"; fence: its
-- token's digits when the caller has them already.
local function holderText(h, fence)
  local part = h[1] .. ',' .. (fence or decimal(h[2])) .. ',' .. decimal(h[3]) .. ',' .. decimal(h[4])
  if (h[5] or 0) > 0 then
    part = part .. ',' .. decimal(h[5])
  end
  return part
end

local function formatShared(kind, holders, waited)
  local parts = {kind}
  for _, h in ipairs(holders) do
    -- a holder read and not changed keeps its text: formatting numbers is most of this
    -- function's work (decimal in lib.lua), and holders mostly stay as they were
    parts[#parts + 1] = h[6] or holderText(h)
  end
  local value = table.concat(parts, '|')
  if waited then
    value = value .. ':w'
  end
  return value
end

-- The latest moment a holder's lease, or lock delay after it, ends: how long the key must live.
local function latestEnd(holders)
  local latest = 0
  for _, h in ipairs(holders) do
    latest = math.max(latest, h[3] + h[5])
  end
  return latest
end

-- The holders whose lease, or lock delay after it, has not ended (an expiry of 0 becomes the
-- key's, less the holder's delay), and the latest moment the key must live until for them.
-- A holder in its delay still counts (a writer waits for it, a permit stays taken), but no
-- longer holds its share (see holderLasts).
local function liveHolders(key, holders, now)
  local ttl = nil
  local live = {}
  for _, h in ipairs(holders) do
    h[5] = h[5] or 0
    if h[3] == 0 then
      if not ttl then
        ttl = redis.call('PTTL', key)
      end
      changed(h)[3] = now + math.max(ttl, 0) - h[5]
    end
    if h[3] + h[5] > now then
      live[#live + 1] = h
    end
  end
  return live, latestEnd(live)
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

-- The owner's entry among a key's holders (as parseShared read them), nil when it has none
-- or is in its lock delay (its lease ended).
local function shareOf(key, holders, owner)
  local mine = holderOf(holders, owner)
  if mine and mine[5] > 0 then
    mine = holderOf(liveHolders(key, holders, serverMillis()), owner)
    mine = (mine and holderLasts(mine, serverMillis())) and mine or nil
  end
  return mine
end

-- The owner's entry among a shared value's holders, as shareOf.
local function heldShare(key, value, owner)
  local _, holders = parseShared(value)
  return shareOf(key, holders, owner)
end
