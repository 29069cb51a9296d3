import { RedisScript } from '@herald/redis';

/**
 * Claim: place the in-flight marker if the key is free, or held by a marker whose deadline has
 * passed (its request is dead: it crashed, or gave up before its claim reached Redis), else return
 * what is there. One atomic step, so of any number of concurrent claims (from any process or
 * region) exactly one wins. Lua rather than `SET NX GET` because the latter needs Redis 7 and we
 * do not want to require it.
 * ARGV: marker, marker TTL in ms, the claimant's clock (ms since the epoch). Returns nil when
 * claimed, the existing value otherwise.
 */
export const claimScript = new RedisScript(`
local existing = redis.call('GET', KEYS[1])
if existing then
  local ok, entry = pcall(cjson.decode, existing)
  local dead = ok and type(entry) == 'table' and entry.state == 'in_flight' and type(entry.deadline) == 'number' and entry.deadline < tonumber(ARGV[3])
  if not dead then return existing end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`);

/**
 * Replace the marker with a new value, only if the lease still owns it. A lease whose marker
 * expired and was claimed by another request must not overwrite that request's state.
 * ARGV: the lease's marker, the new value, TTL in ms. Returns 1 if replaced.
 */
export const swapScript = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
`);

/** Delete the marker only if the lease still owns it. ARGV: the lease's marker. Returns 1 if deleted. */
export const releaseScript = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);
