import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, loadConfig } from '@herald/config';
import { HeraldError } from '@herald/core';
import { RedisModule, RedisService } from '@herald/redis';
import { eventually, PrivateRedis, startPrivateRedis } from '@herald/testing';
import { LimitsModule } from './limits.module';
import { QuotaService } from './quota.service';
import { RateLimiter } from './rate-limiter.service';

/**
 * Rate limit and quota while Redis is unreachable (a redis-server of this suite's own, killed and
 * started again): each process limits alone to LIMITS_FALLBACK_SHARE (here 0.5) of the team's
 * figures, answers 503 beyond its quota allowance, and goes back to Redis once it answers.
 */
describe('limits without Redis', () => {
  let server: PrivateRedis;
  let app: INestApplicationContext;
  let limiter: RateLimiter;
  let quota: QuotaService;
  let redis: RedisService;

  beforeAll(async () => {
    server = await startPrivateRedis();
    const config = loadConfig(process.env, { NODE_ENV: 'test', LOG_LEVEL: 'silent', REDIS_URL: server.url, LIMITS_FALLBACK_SHARE: '0.5' });
    app = await NestFactory.createApplicationContext(
      { module: class LimitsTestRoot {}, imports: [ConfigModule.forRoot(config), RedisModule, LimitsModule] },
      { logger: false },
    );
    [limiter, quota, redis] = [app.get(RateLimiter), app.get(QuotaService), app.get(RedisService)];
  });

  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  const down = async () => {
    await server.kill();
    // The first command finds out; from then on every one is refused before it is sent.
    await expect(redis.ping()).rejects.toMatchObject({ code: 'service_unavailable' });
  };
  const up = async () => {
    await server.restart();
    await eventually(async () => expect(await redis.ping()).toBe(true), 5000);
  };

  it('rate-limits each process to its share of the team limit, then returns to the shared limit', async () => {
    const team = randomUUID();
    await down();
    try {
      const states = Array.from({ length: 6 }, () => limiter.consume(team, 10));
      const answered = await Promise.all(states);
      expect(answered.map((s) => s.allowed)).toEqual([true, true, true, true, true, false]);
      expect(answered[5]).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 1 });
    } finally {
      await up();
    }
    const shared = await limiter.consume(team, 10);
    expect(shared).toMatchObject({ allowed: true, limit: 10, remaining: 9 });
  });

  it('grants emails locally up to the share of a day, then refuses with 503 and Retry-After, never 429', async () => {
    const team = randomUUID();
    const now = new Date('2031-03-10T12:00:00Z');
    await down();
    try {
      // free: 100 a day, so 50 for this process; pro-50k: a thirtieth of 50,000 (1,667), so 834.
      const first = await quota.reserve(team, 'free', 40, now);
      expect(first).toMatchObject({ local: true, count: 40, daily: { used: 40, limit: 100 } });
      const refused = await quota.reserve(team, 'free', 11, now).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(HeraldError);
      expect(refused).toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 1 });
      expect((refused as Error).message).toMatch(/^Email quotas cannot be checked right now, and nothing was sent/);

      await quota.release(team, first); // a failed send gives its local grant back
      expect(await quota.reserve(team, 'free', 50, now)).toMatchObject({ local: true, daily: { used: 50 } });
      const paid = randomUUID();
      expect(await quota.reserve(paid, 'pro-50k', 834, now)).toMatchObject({ local: true });
      await expect(quota.reserve(paid, 'pro-50k', 1, now)).rejects.toMatchObject({ code: 'service_unavailable' });

      // A refund owed to Redis cannot be paid now: it is dropped (the count stays high), not thrown.
      await expect(quota.release(team, { count: 3, reservedAt: now, local: false })).resolves.toBeUndefined();
    } finally {
      await up();
    }
    // Redis came back empty: it counts again from zero, the local grants are not written back.
    expect(await quota.reserve(team, 'free', 100, now)).toMatchObject({ local: false, daily: { used: 100 } });
    await expect(quota.reserve(team, 'free', 1, now)).rejects.toMatchObject({ code: 'daily_quota_exceeded' });
  });
});
