-- The uncontended acquire of one exclusive key (acquire.lua's KEYS and ARGV) in its commonest
-- case, before the libraries are defined: no max hold, no lock delay, and not an attempt that
-- must leave a queue entry ('q', byte 113). The fencing counter is incremented here; when the
-- key is free (SET NX), it is the owner's with that token, as acquire.lua would set it
-- ("<owner>:<fence>:0", exclusiveValue in lib.lua), and the reply is the token alone: a bare
-- integer (> 1), which says what {ACQUIRED, fence} says and spares Redis an array reply (about
-- 5,600 instructions of its own per call, counted with callgrind: docs/benchmarks.md). Redis
-- defines every library function again on each run, which this case then does not pay. A
-- counter that was missing (INCR gave 1: it must be seeded, see nextFence) or a key that is
-- taken go on to acquire.lua, which is given the counter's new value (plainIncr; nil when not
-- incremented here).
-- The token is written as decimal() in lib.lua writes it.
local plainIncr = nil
if (ARGV[3] == nil or ARGV[3] == '0') and (ARGV[5] == nil or ARGV[5] == '0')
    and string.byte(ARGV[4] or '') ~= 113 then
  plainIncr = redis.call('INCR', KEYS[2])
  if plainIncr > 1 then
    local low = plainIncr % 1e8
    local fence = (plainIncr < 1e8) and string.format('%d', plainIncr)
      or string.format('%d%08d', (plainIncr - low) / 1e8, low)
    if redis.call('SET', KEYS[1], ARGV[1] .. ':' .. fence .. ':0', 'NX', 'PX', ARGV[2]) then
      return plainIncr
    end
  end
end
