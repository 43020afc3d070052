"""The Lua scripts: each reservation, settlement and cooldown mark is one atomic step
on the server, so no other process can act between its check and its write.

Every key a script touches carries the same hash tag, so on Redis Cluster they share a
slot. Amounts are integers (requests, tokens, money in nano-units); TTLs milliseconds.
"""

from __future__ import annotations

__all__ = ["MARK", "RESERVE", "SETTLE"]

# KEYS: the counters, then the learned marker (below). ARGV: per counter, 5 values:
# amount, limit (-1: none), ttl ms, kind ("count" or "countdown"), refresh ("1": every
# write renews the TTL). Returns {0, marker} when every charge was taken, else {index,
# value, pttl, marker} of the first that did not fit (pttl -3: the amount alone is over
# the limit); marker: the learned marker's PTTL (-2: no learned counter exists).
RESERVE = """
local n = #KEYS - 1
local marker = redis.call('PTTL', KEYS[n + 1])
for i = 1, n do
  local b = (i - 1) * 5
  local amount = tonumber(ARGV[b + 1])
  local limit = tonumber(ARGV[b + 2])
  local value = redis.call('GET', KEYS[i])
  if ARGV[b + 4] == 'countdown' then
    if value and tonumber(value) < amount then
      return {i, tonumber(value), redis.call('PTTL', KEYS[i]), marker}
    end
  elseif limit >= 0 then
    local current = tonumber(value or '0')
    if current + amount > limit then
      if amount > limit then return {i, current, -3, marker} end
      local left = 0
      if value then left = redis.call('PTTL', KEYS[i]) end
      return {i, current, left, marker}
    end
  end
end
for i = 1, n do
  local b = (i - 1) * 5
  if ARGV[b + 4] == 'countdown' then
    if redis.call('EXISTS', KEYS[i]) == 1 then
      redis.call('DECRBY', KEYS[i], ARGV[b + 1])
    end
  else
    redis.call('INCRBY', KEYS[i], ARGV[b + 1])
    if ARGV[b + 5] == '1' or redis.call('PTTL', KEYS[i]) < 0 then
      redis.call('PEXPIRE', KEYS[i], ARGV[b + 3])
    end
  end
end
return {0, marker}
"""

# KEYS: the counters to adjust, then the counters to set, then the learned marker.
# ARGV[1]: how many to adjust; then one amount per adjusted key; then value, ttl ms and
# room ("1": a countdown charge reads it, a server's room) per set key. An adjusted
# counter whose window ended is not re-created; none goes below zero. The marker lives
# at least as long as every room set, so while it is absent no room exists.
SETTLE = """
local adjust = tonumber(ARGV[1])
local n = #KEYS - 1
for i = 1, adjust do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('INCRBY', KEYS[i], ARGV[1 + i]) < 0 then
      redis.call('SET', KEYS[i], 0, 'KEEPTTL')
    end
  end
end
local longest = 0
for i = adjust + 1, n do
  local b = 1 + adjust + (i - adjust - 1) * 3
  local ttl = tonumber(ARGV[b + 2])
  redis.call('SET', KEYS[i], ARGV[b + 1], 'PX', ttl)
  if ARGV[b + 3] == '1' and ttl > longest then longest = ttl end
end
if longest > 0 and redis.call('PTTL', KEYS[n + 1]) < longest then
  redis.call('SET', KEYS[n + 1], '1', 'PX', longest)
end
return 1
"""

# KEYS[1]: the cooldown. ARGV[1]: ttl ms. Never shortens a longer cooldown.
MARK = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
"""
