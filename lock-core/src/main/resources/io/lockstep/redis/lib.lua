-- The library of the lock scripts, prepended to each of them (see ScriptTexts): reply codes,
-- the server clock, the fencing counter, the exclusive holder's value. The acquire scripts also
-- get lib-acquire.lua, the scripts that read keys held by readers or permit holders
-- lib-shared.lua, those that read a waiter queue lib-queue.lua, the release scripts
-- lib-release.lua: each script is given only the libraries it calls, since Redis defines every
-- function of its text again on each run.
--
-- An exclusive holder's key holds "<owner>:<fence>:<cap>" (with a lock delay
-- "<owner>:<fence>:<cap>:<delay>:<lease end>", see exclusiveDelay); a key held by readers or
-- permit holders "<kind>|<holder>|..." (see lib-shared.lua). Either value ends in ":w" while
-- someone waits for the key (markWaited in lib-acquire.lua): its release then tells the waiters,
-- or hands the key to the first of them (lib-release.lua).

-- The first element of an acquire script's reply (LockScripts names them alike).
local ACQUIRED = 1
local HELD = 0
local NO_PERSISTENCE = -1
local OTHER_KIND = -2

local millis = nil

-- An integer below 2^53 (every one a Lua number holds exactly: fencing tokens, times in ms) in
-- decimal digits, as string.format('%.0f') writes it but in two halves of at most eight digits,
-- each of which '%d' prints exactly also where a C long has 32 bits: '%.0f' goes through the C
-- library's floating-point printing (about 5,800 instructions for a token, against 4,100 this
-- way; counted with callgrind, docs/benchmarks.md). acquire-plain.lua writes its token alike.
local function decimal(n)
  if n < 1e8 then
    return string.format('%d', n)
  end
  local low = n % 1e8
  return string.format('%d%08d', (n - low) / 1e8, low)
end

-- The server time in ms, read once per run (TIME): every step of a script sees one moment.
local function serverMillis()
  if not millis then
    local time = redis.call('TIME')
    millis = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return millis
end

-- The fencing token of a key's counter just incremented to fence (INCR; it never expires):
-- fenceAfter; nextFence increments it. Strictly increasing
-- for every key the counter serves. A counter that is missing (a new Redis, or one restarted
-- without persistence) starts again at the server time in microseconds: above every token
-- issued before, as long as fewer than a million were issued per second since it last started
-- (and at or above a start in ms x 1000, the form earlier versions also used).
local function fenceAfter(counter, fence)
  if fence == 1 then
    local time = redis.call('TIME')
    fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
    redis.call('SET', counter, decimal(fence))
  end
  return fence
end

local function nextFence(counter)
  return fenceAfter(counter, redis.call('INCR', counter))
end

-- Whether a value ("<owner>:...", or a writer's mark "<owner>:<expires>") is this owner's; a
-- token that is a prefix of the owner's is not the owner.
local function ownedBy(value, owner)
  return string.sub(value, 1, #owner + 1) == owner .. ':'
end

local function isShared(value)
  return string.find(value, '|', 1, true) ~= nil
end

local function holdsShare(value, owner)
  return string.find(value, '|' .. owner .. ',', 1, true) ~= nil
end

local function isWaited(value)
  return string.sub(value, -2) == ':w'
end

-- How many holders a kind admits ("r": any number), as the scripts report it: 0 for readers,
-- n for a semaphore of n permits.
local function permitsOf(kind)
  if kind == 'r' then
    return 0
  end
  return tonumber(string.sub(kind, 2))
end

-- Lock delay (lockstep.lock-delay) of an exclusive holder: its value is
-- "<owner>:<fence>:<cap>:<delay>:<lease end>" (":w" appended as ever), and the key lives <delay>
-- ms past <lease end> (server ms), so that a lease that ends without a release leaves the key
-- unavailable that long; from <lease end> on, the owner no longer holds it (renewals and checks
-- find it lost). Returns the delay and the lease end, or nil for a value without a delay.
local function exclusiveDelay(value)
  local d, e = string.match(value, '^[^:|]*:%d+:%d+:(%d+):(%d+)')
  if d then
    return tonumber(d), tonumber(e)
  end
  return nil
end

-- Whether an exclusive holder's own lease lasts (not in its lock delay).
local function leaseLasts(value)
  local _, leaseEnd = exclusiveDelay(value)
  return leaseEnd == nil or leaseEnd > serverMillis()
end

-- A delayed exclusive value whose lease now ends at leaseEnd.
local function withLeaseEnd(value, leaseEnd)
  local head, d, rest = string.match(value, '^([^:|]*:%d+:%d+):(%d+):%d+(.*)$')
  return head .. ':' .. d .. ':' .. decimal(leaseEnd) .. rest
end

-- An exclusive holder's value: "<owner>:<fence>:<cap>", with a delay > 0 also its lease end.
local function exclusiveValue(owner, fence, cap, delay, leaseEnd)
  local value = owner .. ':' .. decimal(fence) .. ':' .. decimal(cap)
  if delay > 0 then
    value = value .. ':' .. decimal(delay) .. ':' .. decimal(leaseEnd)
  end
  return value
end
