-- Acquires several locks all or nothing, atomically (so no ordering can deadlock).
-- KEYS[1..n]     lock keys
-- KEYS[n+1..2n]  the fencing counter serving each lock key, in the same order
-- ARGV[1]        owner token (128-bit random, hex)
-- ARGV[2]        lease in milliseconds
-- ARGV[3]        max hold in milliseconds, 0 for none (see acquire.lua)
-- KEYS[2n+1..3n] optional, with ARGV[5]: the waiter table of each lock key
-- ARGV[4]        optional; "1" (Redlock): acquire only on a Redis whose data survives a restart,
--                i.e. whose INFO persistence says aof_enabled:1
-- ARGV[5]        optional, for a caller that waits: how long its mark lives, in ms (see
--                writerMark in lib-queue.lua): a key held by readers is
--                marked in its waiter table, so that readers that come after wait behind this
--                writer; an owner that gets the keys takes its marks off
-- ARGV[6]        optional: the lock delay in ms (see exclusiveDelay in lib.lua); 0 or absent: none
-- Returns  {ACQUIRED, fence1, ..., fencen}  all acquired (keys already holding this owner token
--                                    keep their fencing token and cap; their lease is refreshed
--                                    within the cap)
--          {HELD, pttl, i, owner}    at least one key is held by another owner: pttl = the
--                                    longest remaining lease among those keys, in ms,
--                                    i = the 0-based index of the first such key and owner =
--                                    the owner token holding it (empty for readers or permit
--                                    holders)
--          {NO_PERSISTENCE}          ARGV[4] is "1" and this Redis does not persist: nothing done
--          {OTHER_KIND, permits}     a key is held by a semaphore of that many permits: not a key
--                                    of exclusive locks (see acquire.lua); nothing done
-- A key held by another owner is marked as waited for (see acquire.lua), so that its release
-- publishes a notification. Fencing tokens come from nextFence (lib.lua), as in acquire.lua.

if ARGV[4] == '1' and not string.find(redis.call('INFO', 'persistence'), 'aof_enabled:1', 1, true) then
  return {NO_PERSISTENCE}
end
local marks = ARGV[5] and tonumber(ARGV[5]) > 0 and #KEYS % 3 == 0
local n = marks and #KEYS / 3 or #KEYS / 2
local owner, lease, maxHold = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local delay = tonumber(ARGV[6] or '0') or 0
-- a key a release kept for this writer (lib-release.lua) is free for it
local reserved = '~w:' .. owner .. ':'
local function free(current)
  return not current or string.sub(current, 1, #reserved) == reserved
end
local longest = -1
local first = -1
local holder = ''
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  local kind = current and sharedKind(current)
  if kind and kind ~= 'r' then
    return {OTHER_KIND, permitsOf(kind)}
  end
  if not free(current) and not (ownedBy(current, owner) and leaseLasts(current)) then
    -- another owner's, or this owner's lease ended and the key is in its lock delay
    longest = math.max(longest, redis.call('PTTL', KEYS[i]))
    if first < 0 then
      first = i - 1
      holder = kind and '' or string.match(current, '^[^:]*')
    end
  end
end
if first >= 0 then
  for i = 1, n do
    local current = redis.call('GET', KEYS[i])
    if not free(current) and not ownedBy(current, owner) then
      markWaited(KEYS[i], current)
    end
    if marks and current and string.sub(current, 1, 2) == 'r|' then
      local table = KEYS[2 * n + i]
      local life = tonumber(ARGV[5])
      redis.call('HSET', table, '~w', owner .. ':' .. decimal(serverMillis() + life))
      if redis.call('PTTL', table) < life + 60000 then
        redis.call('PEXPIRE', table, life + 60000)
      end
    end
  end
  return {HELD, longest, first, holder}
end
local now = serverMillis()
local cap = 0
if maxHold > 0 then
  cap = now + maxHold
end
local result = {ACQUIRED}
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current and not free(current) then
    -- ours already (a retried acquire): refresh the lease within the cap, keep the token
    local fence, held = string.match(current, '^[^:]*:(%d+):(%d+)')
    local ttl = lease
    if tonumber(held) > 0 then
      ttl = math.min(ttl, tonumber(held) - now)
    end
    local heldDelay = exclusiveDelay(current)
    if ttl > 0 and heldDelay then
      redis.call('SET', KEYS[i], withLeaseEnd(current, now + ttl), 'PX', ttl + heldDelay)
    elseif ttl > 0 then
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
    result[i + 1] = tonumber(fence)
  else
    local fence = nextFence(KEYS[n + i])
    local waited = ''
    if current and isWaited(current) then
      -- kept for this writer: readers wait behind it
      waited = ':w'
    end
    local mark = marks and redis.call('HGET', KEYS[2 * n + i], '~w')
    if mark and ownedBy(mark, owner) then
      -- readers may wait behind this writer: its release hands the key to them
      redis.call('HDEL', KEYS[2 * n + i], '~w')
      waited = ':w'
    end
    redis.call('SET', KEYS[i], exclusiveValue(owner, fence, cap, delay, now + lease) .. waited, 'PX', lease + delay)
    result[i + 1] = fence
  end
end
return result
