import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { HeraldError } from '@herald/core';
import { RedisModule } from '@herald/redis';
import { IsolatedConfig, isolatedConfig, TcpProxy } from '@herald/testing';
import { LimitsModule } from './limits.module';
import { QuotaService, type QuotaState } from './quota.service';
import { RateLimiter } from './rate-limiter.service';

class Region {}

async function region(config: HeraldConfig): Promise<INestApplicationContext> {
  const imports = [ConfigModule.forRoot(config), RedisModule, LimitsModule];
  return NestFactory.createApplicationContext({ module: Region, imports }, { logger: false });
}

/** Each way between eu-west-1 and Redis in us-east-1: long enough that no machine load makes "did not wait for a round trip" ambiguous. */
const DISTANCE_MS = 400;

const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
};

/**
 * The limits of an eu-west-1 process whose Redis is in us-east-1 (REDIS_REGION), 400 ms away each
 * way through a delay proxy: far from a cap the answer does not wait for Redis, and Redis still
 * counts every send; near a cap every reservation waits for Redis's exact check.
 */
describe('limits with Redis in another region', () => {
  let isolated: IsolatedConfig;
  let proxy: TcpProxy;
  const apps: INestApplicationContext[] = [];
  let near: QuotaService;
  let far: [INestApplicationContext, INestApplicationContext];

  beforeAll(async () => {
    isolated = await isolatedConfig();
    const redis = new URL(isolated.config.REDIS_URL);
    proxy = (await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) })).latency(DISTANCE_MS);
    const farConfig: HeraldConfig = {
      ...isolated.config,
      HERALD_REGION: 'eu-west-1',
      REDIS_REGION: 'us-east-1',
      REDIS_URL: proxy.rewrite(isolated.config.REDIS_URL),
      REDIS_COMMAND_TIMEOUT_MS: 5_000,
    };
    apps.push(await region(isolated.config), await region(farConfig), await region(farConfig));
    near = apps[0]!.get(QuotaService);
    far = [apps[1]!, apps[2]!];
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await proxy?.close();
    await isolated?.cleanup();
  });

  it('grants far from the caps without waiting for Redis, and Redis counts every grant and refund', async () => {
    const quota = far[0].get(QuotaService);
    const team = randomUUID();
    // Nothing known of the team yet: the first reservation waits for Redis (a round trip, 800 ms).
    const first = await timed(() => quota.reserve(team, 'scale-1m', 1));
    expect(first.ms).toBeGreaterThanOrEqual(2 * DISTANCE_MS);
    // Then each is answered at once, all 50 within less than one round trip.
    const rest = await timed(async () => {
      const granted: QuotaState[] = [];
      for (let i = 0; i < 50; i++) granted.push(await quota.reserve(team, 'scale-1m', 1));
      return granted;
    });
    expect(rest.ms).toBeLessThan(DISTANCE_MS);
    expect(rest.value.map((r) => r.monthly.used)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    expect(await Promise.all(rest.value.map((r) => r.counted))).toEqual(new Array(50).fill(true));
    expect((await near.usage(team, 'scale-1m')).monthly.used).toBe(51);
    // A refund of a grant made ahead of Redis is made there once it is counted.
    await quota.release(team, rest.value[0]!);
    expect((await near.usage(team, 'scale-1m')).monthly.used).toBe(50);

    // At most a tenth of the cap's margin of a team's emails wait to be counted: on the 50,000 plan
    // (margin 1,000), 100, so a burst of 150 has 100 answered at once and 50 after Redis.
    const small = randomUUID();
    await quota.reserve(small, 'pro-50k', 1);
    const burst = await Promise.all(Array.from({ length: 150 }, () => timed(() => quota.reserve(small, 'pro-50k', 1))));
    expect(burst.filter((b) => b.ms < DISTANCE_MS)).toHaveLength(100);
    await Promise.all(burst.map((b) => b.value.counted));
    expect((await near.usage(small, 'pro-50k')).monthly.used).toBe(151);
  }, 60_000);

  it('waits for Redis near a cap, so two far processes together never pass it', async () => {
    const team = randomUUID();
    // The free plan's daily cap (100) is inside the margin (1,000): every reservation is checked in Redis first.
    const attempts = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        timed(() =>
          far[i % 2]!.get(QuotaService)
            .reserve(team, 'free', 1)
            .then(
              () => 'granted',
              (error: HeraldError) => error.code,
            ),
        ),
      ),
    );
    expect(attempts.filter((a) => a.value === 'granted')).toHaveLength(100);
    expect(attempts.filter((a) => a.value === 'daily_quota_exceeded')).toHaveLength(20);
    expect(Math.min(...attempts.map((a) => a.ms))).toBeGreaterThanOrEqual(2 * DISTANCE_MS);
    expect((await near.usage(team, 'free')).daily.used).toBe(100);
  }, 60_000);

  it("limits the rate without waiting for Redis: each process to the whole limit, and all of them from Redis's refusal on", async () => {
    const team = randomUUID();
    const [one, two] = far.map((app) => app.get(RateLimiter));
    // One request a second. The first process answers at once, and its own count stops its second.
    const first = await timed(() => Promise.all([one!.consume(team, 1), one!.consume(team, 1)]));
    expect(first.ms).toBeLessThan(DISTANCE_MS);
    expect(first.value.map((s) => s.allowed)).toEqual([true, false]);
    // The other process answers its first at once too; Redis, which counted the first process's, refuses it behind the answer...
    const sent = performance.now();
    expect((await two!.consume(team, 1)).allowed).toBe(true);
    // ...and once that refusal is back (a round trip, 800 ms), the process refuses the team until
    // Redis's reset (a second after it answered), though its own count (a second after its
    // request) would let the team through from 1,000 ms on.
    await new Promise((resolve) => setTimeout(resolve, 1_300 - (performance.now() - sent)));
    const after = await timed(() => two!.consume(team, 1));
    expect(after.value).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    expect(after.ms).toBeLessThan(DISTANCE_MS);
  }, 60_000);
});
