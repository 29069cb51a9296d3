import { randomUUID } from 'node:crypto';
import { RedisModule, RedisScript, RedisService } from '@herald/redis';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { LimitsModule } from './limits.module';
import { rateLimitError, RateLimiter, RateLimitState } from './rate-limiter.service';

class Region {}

/**
 * One "region": its own Nest application context and Redis connection, sharing the key prefix.
 * (A plain application context because @nestjs/testing is not a dependency of the repository.)
 */
async function region(config: HeraldConfig): Promise<INestApplicationContext> {
  const imports = [ConfigModule.forRoot(config), RedisModule, LimitsModule];
  return NestFactory.createApplicationContext({ module: Region, imports }, { logger: false });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RateLimiter (Redis)', () => {
  let isolated: IsolatedConfig;
  let east: INestApplicationContext;
  let west: INestApplicationContext;
  let limiter: RateLimiter;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    [east, west] = await Promise.all([region(isolated.config), region(isolated.config)]);
    limiter = east.get(RateLimiter);
  });

  afterAll(async () => {
    await Promise.all([east?.close(), west?.close()]);
    await isolated?.cleanup();
  });

  it('allows exactly `limit` in a burst, then denies with a reset of at least a second', async () => {
    const team = randomUUID();
    const states: RateLimitState[] = [];
    for (let i = 0; i < 6; i++) states.push(await limiter.consume(team, 5));

    expect(states.slice(0, 5).map((s) => s.allowed)).toEqual([true, true, true, true, true]);
    expect(states.slice(0, 5).map((s) => s.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(states.every((s) => s.limit === 5 && s.resetSeconds >= 1)).toBe(true);
    expect(states[5]).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 1 });
  });

  it('does not let denied requests eat into capacity, and refills within the window', async () => {
    const team = randomUUID();
    for (let i = 0; i < 5; i++) await limiter.consume(team, 5);
    // A client hammering while limited must not push its own recovery further out.
    for (let i = 0; i < 20; i++) expect((await limiter.consume(team, 5)).allowed).toBe(false);

    await sleep(1050);
    const after: boolean[] = [];
    for (let i = 0; i < 6; i++) after.push((await limiter.consume(team, 5)).allowed);
    expect(after).toEqual([true, true, true, true, true, false]);
  });

  it('returns capacity gradually rather than all at a window edge', async () => {
    const team = randomUUID();
    for (let i = 0; i < 4; i++) await limiter.consume(team, 4);
    expect((await limiter.consume(team, 4)).allowed).toBe(false);
    // One emission interval (250 ms) buys back exactly one request.
    await sleep(300);
    expect((await limiter.consume(team, 4)).allowed).toBe(true);
    expect((await limiter.consume(team, 4)).allowed).toBe(false);
  });

  it('keeps teams apart', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await limiter.consume(a, 1)).allowed).toBe(true);
    expect((await limiter.consume(a, 1)).allowed).toBe(false);
    expect((await limiter.consume(b, 1)).allowed).toBe(true);
  });

  it('allows exactly `limit` of 200 concurrent requests split across two regions', async () => {
    const team = randomUUID();
    const limiters = [east.get(RateLimiter), west.get(RateLimiter)];
    expect(east.get(RedisService)).not.toBe(west.get(RedisService));

    // 10/s means one request every 100 ms; 200 pipelined scripts finish well inside that.
    const states = await Promise.all(Array.from({ length: 200 }, (_, i) => limiters[i % 2].consume(team, 10)));

    expect(states.filter((s) => s.allowed)).toHaveLength(10);
    expect(states.filter((s) => !s.allowed).every((s) => s.remaining === 0 && s.resetSeconds >= 1)).toBe(true);
    expect(new Set(states.filter((s) => s.allowed).map((s) => s.remaining))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  });

  it('keeps its state under the configured prefix and lets it expire', async () => {
    const team = randomUUID();
    // The whole burst spent: the state lives until it has refilled, a second at 10/s (one request's
    // 100 ms could pass before the TTL is read on a busy machine, and the key is then gone).
    for (let i = 0; i < 10; i++) await limiter.consume(team, 10);
    const redis = east.get(RedisService);
    const key = redis.key('ratelimit', team);
    expect(key.startsWith(isolated.config.REDIS_PREFIX)).toBe(true);
    const ttl = await redis.client.pTTL(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
  });

  it('runs a script the server has not cached (EVALSHA falls back to EVAL)', async () => {
    // A unique source is never in the server's cache; flushing it would disturb other suites.
    const script = new RedisScript(`-- ${randomUUID()}\nreturn { tonumber(ARGV[1]) + 1 }`);
    expect(await script.run(east.get(RedisService), [], [41])).toEqual([42]);
    expect(await script.run(east.get(RedisService), [], [1])).toEqual([2]);
  });

  it('rejects a limit that is not a positive integer and builds the Resend error', async () => {
    await expect(limiter.consume(randomUUID(), 0)).rejects.toThrow(RangeError);
    const error = rateLimitError({ allowed: false, limit: 10, remaining: 0, resetSeconds: 1 });
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.retryAfterSeconds).toBe(1);
    expect(error.message).toMatch(/^Too many requests\. You can only make 10 requests per second/);
  });
});
