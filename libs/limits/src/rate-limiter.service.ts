import { Inject, Injectable } from '@nestjs/common';
import { isRedisUnavailable, RedisScript, RedisService, integerReply } from '@herald/redis';
import { HeraldError } from '@herald/core';
import { FarRateLimit } from './far-limits';
import { LocalRateLimiter } from './local-limits';
import { LIMITS_CONFIG, LimitsConfig, redisIsFar } from './limits.config';

/** What the transports need for `ratelimit-*` and `retry-after` headers. */
export interface RateLimitState {
  allowed: boolean;
  /** Requests per second. */
  limit: number;
  /** Requests that would still be allowed right now. */
  remaining: number;
  /**
   * Whole seconds (at least 1) until capacity returns: when denied, until the next request is
   * allowed; when allowed, until the full burst of `limit` is available again.
   */
  resetSeconds: number;
}

const PERIOD_MICROS = 1_000_000;

/**
 * GCRA (the generic cell rate algorithm, a token bucket kept as a single timestamp).
 *
 * The key holds the team's "theoretical arrival time" (TAT) in microseconds. Each request moves
 * it forward by one emission interval (period / limit); a request is allowed when the new TAT is
 * at most one period ahead of now, so a full burst of `limit` is allowed at once and then one
 * request every interval. Unlike a fixed window there is no doubled burst at a window edge: no
 * instant ever admits more than `limit`, and the long-run rate is exactly `limit` per second.
 * A denied request writes nothing, so it does not consume capacity.
 *
 * Time is the Redis server's (TIME), not the caller's: API processes in several regions share
 * this one Redis and their clocks differ. Redis 5+ replicates scripts by effects, so reading
 * TIME before a write is allowed. The TAT is written with `%.3f` because Lua's default number
 * formatting (%.14g) would round a microsecond timestamp. One microsecond of slack absorbs the
 * rounding of period / limit in doubles, so a same-instant burst of exactly `limit` is allowed.
 *
 * KEYS[1] TAT key; ARGV[1] limit; ARGV[2] period in microseconds.
 * Returns { allowed (0|1), remaining, resetMicros }.
 */
const GCRA = new RedisScript(`
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local interval = period / limit
local slack = 1
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local newTat = tat + interval
if newTat - now > period + slack then
  return { 0, 0, math.ceil(newTat - period - now) }
end
redis.call('SET', KEYS[1], string.format('%.3f', newTat), 'PX', math.ceil((newTat - now) / 1000))
local remaining = math.floor((period + slack - (newTat - now)) / interval)
if remaining < 0 then remaining = 0 end
return { 1, remaining, math.ceil(newTat - now) }
`);

/**
 * The team rate limit, shared by every process and region through Redis. While Redis is
 * unreachable each process limits on its own (LocalRateLimiter) to LIMITS_FALLBACK_SHARE of the
 * team's limit, rather than refusing all mail (Postfix's smtpd applies its anvil limits only
 * when anvil answers) or letting everything through: the local share keeps the total near the
 * limit. `limit` in the returned state is the one applied.
 */
@Injectable()
export class RateLimiter {
  private readonly local = new LocalRateLimiter();
  /** With Redis in another region: this process's own count of each team, at the whole limit, and Redis's refusals. */
  private readonly far: { own: LocalRateLimiter; view: FarRateLimit } | null;

  constructor(
    private readonly redis: RedisService,
    @Inject(LIMITS_CONFIG.token) private readonly config: LimitsConfig,
  ) {
    this.far = redisIsFar(config) ? { own: new LocalRateLimiter(), view: new FarRateLimit() } : null;
  }

  /**
   * Counts one request of the team against `limit` requests per second, in one round trip; with
   * Redis in another region, without waiting for it (FarRateLimit in far-limits.ts).
   */
  async consume(teamId: string, limit: number): Promise<RateLimitState> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
    if (this.far) return this.consumeFar(this.far, teamId, limit);
    return this.consumeInRedis(teamId, limit);
  }

  private consumeFar(far: { own: LocalRateLimiter; view: FarRateLimit }, teamId: string, limit: number): RateLimitState {
    const deniedFor = far.view.deniedFor(teamId);
    if (deniedFor > 0) return { allowed: false, limit, remaining: 0, resetSeconds: deniedFor };
    const state = far.own.consume(teamId, limit);
    if (!state.allowed) return state;
    void GCRA.run(this.redis, [this.redis.key('ratelimit', teamId)], [limit, PERIOD_MICROS]).then(
      (reply) => {
        const [allowed, , resetMicros] = integerReply(reply, 3);
        if (allowed !== 1) far.view.refused(teamId, resetMicros / 1000);
      },
      // Redis unreachable: this process's own count, at the whole limit, is what limits the team meanwhile.
      () => undefined,
    );
    return state;
  }

  private async consumeInRedis(teamId: string, limit: number): Promise<RateLimitState> {
    let reply: unknown;
    try {
      reply = await GCRA.run(this.redis, [this.redis.key('ratelimit', teamId)], [limit, PERIOD_MICROS]);
    } catch (error) {
      if (!isRedisUnavailable(error)) throw error;
      return this.local.consume(teamId, Math.max(1, Math.floor(limit * this.config.LIMITS_FALLBACK_SHARE)));
    }
    const [allowed, remaining, resetMicros] = integerReply(reply, 3);
    return {
      allowed: allowed === 1,
      limit,
      remaining: Math.min(remaining, limit),
      resetSeconds: Math.max(1, Math.ceil(resetMicros / PERIOD_MICROS)),
    };
  }
}

/** The Resend-style error a transport raises for a denied request. */
export function rateLimitError(state: RateLimitState): HeraldError {
  return new HeraldError(
    'rate_limit_exceeded',
    `Too many requests. You can only make ${state.limit} requests per second. ` +
      'See rate limit response headers for more information. Or contact support to increase rate limit.',
    state.resetSeconds,
  );
}
