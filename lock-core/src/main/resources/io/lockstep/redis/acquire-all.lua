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
--                writerMarked in holders.lua, which is prepended): a key held by readers is
--                marked in its waiter table, so that readers that come after wait behind this
--                writer; an owner that gets the keys takes its marks off
-- ARGV[6]        optional: the lock delay in ms (see exclusiveDelay in holders.lua, which is
--                prepended); 0 or absent: none
-- Returns  {1, fence1, ..., fencen}  all acquired (keys already holding this owner token keep
--                                    their fencing token and cap; their lease is refreshed
--                                    within the cap)
--          {0, pttl, i, owner}       at least one key is held by another owner: pttl = the
--                                    longest remaining lease among those keys, in ms,
--                                    i = the 0-based index of the first such key and owner =
--                                    the owner token holding it (empty for readers or permit holders)
--          {-1}                      ARGV[4] is "1" and this Redis does not persist: nothing done
--          {-2, permits}             a key is held by a semaphore of that many permits: not a key
--                                    of exclusive locks (see acquire.lua); nothing done
-- A key held by another owner is marked as waited for (see acquire.lua), so that its release
-- publishes a notification. Fencing tokens come from INCR, as in acquire.lua.
if ARGV[4] == '1' and not string.find(redis.call('INFO', 'persistence'), 'aof_enabled:1', 1, true) then
  return {-1}
end
local marks = ARGV[5] and tonumber(ARGV[5]) > 0 and #KEYS % 3 == 0
local n = marks and #KEYS / 3 or #KEYS / 2
local millis = serverMillis
local delay = tonumber(ARGV[6] or '0') or 0
local prefix = ARGV[1] .. ':'
-- a key a release kept for this writer (release.lua) is free for it
local reserved = '~w:' .. prefix
local function free(current)
  return not current or string.sub(current, 1, #reserved) == reserved
end
local longest = -1
local first = -1
local holder = ''
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current and string.sub(current, 1, 1) == 's' and string.find(current, '|', 1, true) then
    -- held by a semaphore's permit holders (see holders.lua): not a key of exclusive locks
    return {-2, tonumber(string.match(current, '^s(%d+)'))}
  end
  if not free(current) and (string.sub(current, 1, #prefix) ~= prefix or not leaseLasts(current, millis)) then
    -- another owner's, or this owner's lease ended and the key is in its lock delay
    longest = math.max(longest, redis.call('PTTL', KEYS[i]))
    if first < 0 then
      first = i - 1
      holder = string.find(current, '|', 1, true) and '' or string.match(current, '^[^:]*')
    end
  end
end
if first >= 0 then
  for i = 1, n do
    local current = redis.call('GET', KEYS[i])
    if not free(current) and string.sub(current, 1, #prefix) ~= prefix and string.sub(current, -2) ~= ':w' then
      redis.call('SET', KEYS[i], current .. ':w', 'KEEPTTL')
    end
    if marks and current and string.sub(current, 1, 2) == 'r|' then
      local table = KEYS[2 * n + i]
      redis.call('HSET', table, '~w', ARGV[1] .. ':' .. string.format('%.0f', millis() + tonumber(ARGV[5])))
      if redis.call('PTTL', table) < tonumber(ARGV[5]) + 60000 then
        redis.call('PEXPIRE', table, tonumber(ARGV[5]) + 60000)
      end
    end
  end
  return {0, longest, first, holder}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local cap = 0
if tonumber(ARGV[3]) > 0 then
  cap = math.floor(now / 1000) + tonumber(ARGV[3])
end
local result = {1}
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current and not free(current) then
    -- ours already (a retried acquire): refresh the lease within the cap, keep the token
    local fence, held = string.match(current, '^[^:]*:(%d+):(%d+)')
    local ttl = tonumber(ARGV[2])
    if tonumber(held) > 0 then
      ttl = math.min(ttl, tonumber(held) - math.floor(now / 1000))
    end
    local heldDelay = exclusiveDelay(current)
    if ttl > 0 and heldDelay then
      redis.call('SET', KEYS[i], withLeaseEnd(current, math.floor(now / 1000) + ttl), 'PX', ttl + heldDelay)
    elseif ttl > 0 then
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
    result[i + 1] = tonumber(fence)
  else
    local fence = redis.call('INCR', KEYS[n + i])
    if fence == 1 then
      fence = now
      redis.call('SET', KEYS[n + i], string.format('%.0f', fence))
    end
    local waited = ''
    if current and string.sub(current, -2) == ':w' then
      -- kept for this writer: readers wait behind it
      waited = ':w'
    end
    if marks then
      local mark = redis.call('HGET', KEYS[2 * n + i], '~w')
      if mark and string.sub(mark, 1, #prefix) == prefix then
        -- readers may wait behind this writer: its release hands the key to them
        redis.call('HDEL', KEYS[2 * n + i], '~w')
        waited = ':w'
      end
    end
    redis.call('SET', KEYS[i], exclusiveValue(ARGV[1], fence, cap, delay, math.floor(now / 1000) + tonumber(ARGV[2]))
      .. waited, 'PX', tonumber(ARGV[2]) + delay)
    result[i + 1] = fence
  end
end
return result
