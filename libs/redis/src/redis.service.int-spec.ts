import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, loadConfig } from '@herald/config';
import { eventually, PrivateRedis, startPrivateRedis } from '@herald/testing';
import { RedisModule } from './redis.module';
import { RedisService } from './redis.service';
import { isRedisUnavailable, REDIS_RETRY_AFTER_SECONDS } from './redis-unavailable.error';

/** How long a command took to fail (ms), and with what. */
async function failure(attempt: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await attempt;
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
  throw new Error('expected the command to fail');
}

/**
 * RedisService against a redis-server of this suite's own, which it freezes (SIGSTOP), kills and
 * restarts: commands fail fast with RedisUnavailableError instead of hanging, and the service
 * notices by itself when Redis answers again.
 */
describe('RedisService when Redis is unreachable', () => {
  let server: PrivateRedis;
  let app: INestApplicationContext;
  let redis: RedisService;
  const TIMEOUT_MS = 250;
  const get = () => redis.command((client) => client.get(redis.key('probe')));

  beforeAll(async () => {
    server = await startPrivateRedis();
    const config = loadConfig(process.env, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      REDIS_URL: server.url,
      REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    app = await NestFactory.createApplicationContext(
      { module: class RedisTestRoot {}, imports: [ConfigModule.forRoot(config), RedisModule] },
      { logger: false },
    );
    redis = app.get(RedisService);
  });

  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it('fails a command to a frozen Redis after its timeout, the next ones at once, and recovers when it thaws', async () => {
    await redis.command((client) => client.set(redis.key('probe'), 'kept'));
    server.pause();
    try {
      const first = await failure(get());
      const next = await failure(get());
      console.log(`frozen Redis: first command failed after ${first.ms.toFixed(1)} ms, the next after ${next.ms.toFixed(1)} ms`);
      expect(isRedisUnavailable(first.error) && isRedisUnavailable(next.error)).toBe(true);
      expect(first.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 1);
      expect(first.ms).toBeLessThan(TIMEOUT_MS + 1000);
      expect(next.ms).toBeLessThan(first.ms);
      expect(next.error).toMatchObject({ code: 'service_unavailable', retryAfterSeconds: REDIS_RETRY_AFTER_SECONDS });
      expect(redis.isAvailable).toBe(false);
      await expect(redis.ping()).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      server.resume();
    }
    await eventually(async () => expect(await get()).toBe('kept'), 5000);
    expect(redis.isAvailable).toBe(true);
  });

  it('drops a socket that stays silent and redials (a lost network would never answer on it)', async () => {
    const connection = () => redis.command((client) => client.clientId());
    const before = await connection();
    server.pause();
    try {
      await failure(get());
      await new Promise((resolve) => setTimeout(resolve, 4000)); // past the 3 s idle limit
    } finally {
      server.resume();
    }
    await eventually(async () => expect(await get()).toBe('kept'), 5000);
    expect(await connection()).not.toBe(before);
  });

  it('refuses at once while Redis is down, and reconnects to the new (empty) server by itself', async () => {
    await server.kill();
    const down = await failure(get());
    expect(isRedisUnavailable(down.error)).toBe(true);
    expect(down.ms).toBeLessThan(TIMEOUT_MS + 1000);
    await server.restart();
    await eventually(async () => expect(await redis.ping()).toBe(true), 5000);
    expect(await get()).toBeNull();
  });

  it('rethrows an error that is the command’s own, and stays available', async () => {
    const { error } = await failure(redis.command((client) => client.sendCommand(['NO-SUCH-COMMAND'])));
    expect(isRedisUnavailable(error)).toBe(false);
    expect((error as Error).message).toMatch(/unknown command/);
    expect(redis.isAvailable).toBe(true);
  });
});
