import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, loadConfig } from '@herald/config';
import { RedisModule, RedisService } from '@herald/redis';
import { eventually, PrivateRedis, startPrivateRedis } from '@herald/testing';
import { PEOPLE_CONFIG } from './people.config';
import { SignInLimiter } from './sign-in-limiter';

/**
 * The sign-in limit while Redis is unreachable (a redis-server of this suite's own, killed and
 * started again): the process counts alone with the same limits, per account and per address,
 * so an outage does not open brute force; once Redis answers, the shared counts are used again.
 */
describe('sign-in limit without Redis', () => {
  let server: PrivateRedis;
  let app: INestApplicationContext;
  let limiter: SignInLimiter;
  let redis: RedisService;

  beforeAll(async () => {
    server = await startPrivateRedis();
    const config = loadConfig(process.env, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      REDIS_URL: server.url,
      SIGN_IN_FAILURES_PER_MINUTE: '10',
      SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE: '30',
    });
    app = await NestFactory.createApplicationContext(
      { module: class SignInLimitRoot {}, imports: [ConfigModule.forRoot(config), RedisModule], providers: [PEOPLE_CONFIG.provider, SignInLimiter] },
      { logger: false },
    );
    [limiter, redis] = [app.get(SignInLimiter), app.get(RedisService)];
    await server.kill();
    await expect(redis.ping()).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  /** `attempts` sign-ins with a wrong password for `email` from `ip`: the verdict of each. */
  const guess = async (email: string, ip: string, attempts: number) => {
    const verdicts = [];
    for (let i = 0; i < attempts; i++) {
      const verdict = await limiter.check(email, ip);
      verdicts.push(verdict.allowed);
      if (verdict.allowed) await limiter.failed(email);
    }
    return verdicts;
  };

  it('refuses the 11th wrong password for an account within the minute, from any address', async () => {
    const email = `victim-${randomUUID()}@people.test`;
    const verdicts = await Promise.all([guess(email, '198.51.100.1', 6), guess(email.toUpperCase(), '198.51.100.2', 6)]);
    expect(verdicts.flat().filter(Boolean)).toHaveLength(10);
    const next = await limiter.check(email, '198.51.100.3');
    expect(next.allowed).toBe(false);
    expect(next.retryAfterSeconds).toBeGreaterThan(0);
    expect(next.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('refuses an address past its attempts within the minute, whatever accounts it tries', async () => {
    const ip = '203.0.113.9';
    const verdicts = [];
    for (let i = 0; i < 31; i++) verdicts.push((await limiter.check(`user-${i}-${randomUUID()}@people.test`, ip)).allowed);
    expect(verdicts.slice(0, 30).every(Boolean)).toBe(true);
    expect(verdicts[30]).toBe(false);
    expect((await limiter.check('someone@people.test', '203.0.113.10')).allowed).toBe(true);
  });

  it('uses the shared counts again once Redis answers', async () => {
    await server.restart();
    await eventually(async () => expect(await redis.ping()).toBe(true), 5000);
    // The address refused locally starts afresh in Redis (local counts are not carried over).
    expect((await limiter.check('someone@people.test', '203.0.113.9')).allowed).toBe(true);
    const keys = await redis.client.keys(redis.key('signin', 'address', '*'));
    expect(keys.length).toBeGreaterThan(0);
  });
});
