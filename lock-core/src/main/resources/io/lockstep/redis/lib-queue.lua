-- Reading a key's waiter queue (lib.lua comes before it): a list of owner tokens, first come
-- first served, and a table of their entries (joinQueue in lib-acquire.lua).

-- A queue entry's expiry, lease, max hold, kind, channel and lock delay; nil when malformed. An
-- entry without a kind ("<expires>:<lease>:<max hold>:<channel>", as earlier versions queued an
-- exclusive waiter) is an exclusive one.
local function readEntry(entry)
  local expires, lease, maxHold, kind, channel = string.match(entry, '^(%d+):(%d+):(%d+):(%w+):(.*)$')
  if not expires then
    return nil
  end
  if kind ~= 'x' and kind ~= 'r' and not string.match(kind, '^s%d+$') then
    channel = kind .. ':' .. channel
    kind = 'x'
  end
  local delay = 0
  local d, rest = string.match(channel, '^d(%d+):(.*)$')
  if d then
    delay, channel = tonumber(d), rest
  end
  return tonumber(expires), tonumber(lease), tonumber(maxHold), kind, channel, delay
end

-- A waiter's kind, lease, max hold, channel and lock delay while its entry lives, else nil.
local function liveEntry(table, waiter, now)
  local entry = waiter and redis.call('HGET', table, waiter)
  if not entry then
    return nil
  end
  local expires, lease, maxHold, kind, channel, delay = readEntry(entry)
  if expires and expires > now then
    return kind, lease, maxHold, channel, delay
  end
  return nil
end

-- The first live waiter of a queue, then its entry as liveEntry reads it; nil when there is
-- none. Dead entries (expired, or gone from the table) before it are dropped; with take, the
-- waiter is taken off the queue too, else it stays first.
local function firstLive(queue, table, now, take)
  while true do
    local waiter
    if take then
      waiter = redis.call('LPOP', queue)
    else
      waiter = redis.call('LINDEX', queue, 0)
    end
    if not waiter then
      return nil
    end
    local kind, lease, maxHold, channel, delay = liveEntry(table, waiter, now)
    if take or not kind then
      if not take then
        redis.call('LPOP', queue)
      end
      redis.call('HDEL', table, waiter)
    end
    if kind then
      return waiter, kind, lease, maxHold, channel, delay
    end
  end
end

-- A writer on several keys (acquire-all.lua) that waits for the readers of a key marks the
-- key's waiter table: field "~w" = "<owner>:<expires>" (server ms; the writer's queue-entry
-- life, refreshed by each of its attempts). While the mark lives, readers that come after it
-- wait behind it as behind a writer first in the queue, and a release that frees the key keeps
-- it for that writer until the mark ends: the key then holds "~w:<owner>" (":w" appended), which
-- readers and other writers wait for and that writer takes (lib-release.lua, acquire-all.lua).
-- The live mark, or nil.
local function writerMark(table, now)
  local mark = table and redis.call('HGET', table, '~w')
  if not mark then
    return nil
  end
  local expires = tonumber(string.match(mark, ':(%d+)$'))
  return (expires ~= nil and expires > now) and mark or nil
end
