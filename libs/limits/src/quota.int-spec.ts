import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { HeraldError } from '@herald/core';
import { RedisModule, RedisService } from '@herald/redis';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { LimitsModule } from './limits.module';
import { PlanId } from './plans';
import { QuotaService } from './quota.service';

class Region {}

/** A plain application context because @nestjs/testing is not a dependency of the repository. */
async function region(config: HeraldConfig): Promise<INestApplicationContext> {
  const imports = [ConfigModule.forRoot(config), RedisModule, LimitsModule];
  return NestFactory.createApplicationContext({ module: Region, imports }, { logger: false });
}

/** The HeraldError a reservation was refused with. */
async function refusal(attempt: Promise<unknown>): Promise<HeraldError> {
  try {
    await attempt;
  } catch (e) {
    if (e instanceof HeraldError) return e;
    throw e;
  }
  throw new Error('expected the reservation to be refused');
}

const at = (iso: string) => new Date(iso);

describe('QuotaService (Redis)', () => {
  let isolated: IsolatedConfig;
  let east: INestApplicationContext;
  let west: INestApplicationContext;
  let quota: QuotaService;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    [east, west] = await Promise.all([region(isolated.config), region(isolated.config)]);
    quota = east.get(QuotaService);
  });

  afterAll(async () => {
    await Promise.all([east?.close(), west?.close()]);
    await isolated?.cleanup();
  });

  it('lets a free team send 100 recipients a day, then refuses with daily_quota_exceeded', async () => {
    const team = randomUUID();
    const now = at('2031-03-10T18:00:00Z');
    for (let i = 0; i < 10; i++) await quota.reserve(team, 'free', 10, now);

    const error = await refusal(quota.reserve(team, 'free', 1, now));
    expect(error.code).toBe('daily_quota_exceeded');
    expect(error.message).toMatch(/^You have reached your daily email sending quota/);
    expect(error.retryAfterSeconds).toBe(6 * 3600);
    expect((await quota.usage(team, 'free', now)).daily.used).toBe(100);
  });

  it('reports the counts after a reservation, for the quota headers', async () => {
    const team = randomUUID();
    const now = at('2031-03-10T12:00:00Z');
    await quota.reserve(team, 'free', 4, now);
    const state = await quota.reserve(team, 'free', 3, now);
    expect(state).toEqual({
      daily: { used: 7, limit: 100, resetsAt: at('2031-03-11T00:00:00Z') },
      monthly: { used: 7, limit: 3_000, resetsAt: at('2031-04-01T00:00:00Z') },
      count: 3,
      reservedAt: now,
      local: false,
    });
  });

  it('refuses a reservation that would cross the cap entirely, counting nothing', async () => {
    const team = randomUUID();
    const now = at('2031-03-10T12:00:00Z');
    await quota.reserve(team, 'free', 98, now);

    const error = await refusal(quota.reserve(team, 'free', 3, now));
    expect(error.code).toBe('daily_quota_exceeded');
    expect(await quota.usage(team, 'free', now)).toMatchObject({ daily: { used: 98 }, monthly: { used: 98 } });
    expect((await quota.reserve(team, 'free', 2, now)).daily.used).toBe(100);
  });

  it('enforces the monthly quota of a paid plan, which has no daily cap', async () => {
    const team = randomUUID();
    const now = at('2031-03-31T23:00:00Z');
    const first = await quota.reserve(team, 'pro-50k', 49_990, now);
    expect(first.daily).toEqual({ used: 49_990, limit: null, resetsAt: at('2031-04-01T00:00:00Z') });
    await quota.reserve(team, 'pro-50k', 10, now);

    const error = await refusal(quota.reserve(team, 'pro-50k', 1, now));
    expect(error.code).toBe('monthly_quota_exceeded');
    expect(error.message).toMatch(/^You have reached your monthly email sending quota/);
    expect(error.retryAfterSeconds).toBe(3600);
    expect((await quota.reserve(team, 'pro-50k', 1, at('2031-04-01T00:00:00Z'))).monthly.used).toBe(1);
  });

  it('caps a free team at 3,000 a month even when each day is under 100', async () => {
    const team = randomUUID();
    for (let day = 1; day <= 30; day++) {
      await quota.reserve(team, 'free', 100, at(`2031-01-${String(day).padStart(2, '0')}T09:00:00Z`));
    }
    const error = await refusal(quota.reserve(team, 'free', 1, at('2031-01-31T09:00:00Z')));
    expect(error.code).toBe('monthly_quota_exceeded');
    expect(error.retryAfterSeconds).toBe(15 * 3600);
  });

  it('counts per UTC day and per UTC month', async () => {
    const team = randomUUID();
    await quota.reserve(team, 'free', 100, at('2031-05-31T23:59:59Z'));
    expect((await refusal(quota.reserve(team, 'free', 1, at('2031-05-31T23:59:59Z')))).retryAfterSeconds).toBe(1);

    const nextDay = await quota.reserve(team, 'free', 5, at('2031-06-01T00:00:00Z'));
    expect(nextDay.daily.used).toBe(5);
    expect(nextDay.monthly.used).toBe(5);
    const sameMonth = await quota.reserve(team, 'free', 5, at('2031-06-02T00:00:00Z'));
    expect([sameMonth.daily.used, sameMonth.monthly.used]).toEqual([5, 10]);
    expect((await quota.usage(team, 'free', at('2031-05-31T12:00:00Z'))).monthly.used).toBe(100);
  });

  it('refunds a released reservation in the period it was made in', async () => {
    const team = randomUUID();
    const yesterday = at('2031-07-14T23:59:00Z');
    const today = at('2031-07-15T08:00:00Z');
    const early = await quota.reserve(team, 'free', 100, yesterday);
    await quota.reserve(team, 'free', 30, today);

    await quota.release(team, early);
    expect(await quota.usage(team, 'free', yesterday)).toMatchObject({ daily: { used: 0 }, monthly: { used: 30 } });
    expect(await quota.usage(team, 'free', today)).toMatchObject({ daily: { used: 30 }, monthly: { used: 30 } });

    // The refund frees room that a new reservation can use.
    expect((await quota.reserve(team, 'free', 100, yesterday)).daily.used).toBe(100);
  });

  it('never refunds below zero, nor into a period that has no counter', async () => {
    const team = randomUUID();
    const now = at('2031-08-01T10:00:00Z');
    await quota.reserve(team, 'free', 2, now);
    await quota.release(team, { count: 5, reservedAt: now, local: false });
    await quota.release(team, { count: 5, reservedAt: at('2031-02-01T10:00:00Z'), local: false });
    await quota.release(team, { count: 0, reservedAt: now, local: false });
    expect(await quota.usage(team, 'free', now)).toMatchObject({ daily: { used: 0 }, monthly: { used: 0 } });
    expect((await quota.usage(team, 'free', at('2031-02-01T10:00:00Z'))).monthly.used).toBe(0);
    const redis = east.get(RedisService);
    const keys: string[] = [];
    for await (const batch of redis.client.scanIterator({ MATCH: redis.key('quota', `{${team}}`, '*') })) keys.push(...batch);
    expect(keys.sort()).toEqual([redis.key('quota', `{${team}}`, 'day', '2031-08-01'), redis.key('quota', `{${team}}`, 'month', '2031-08')]);
  });

  it('expires counters after their period, with a margin', async () => {
    const team = randomUUID();
    const now = at('2031-09-30T22:00:00Z');
    await quota.reserve(team, 'free', 1, now);
    const redis = east.get(RedisService);
    expect(await redis.client.ttl(redis.key('quota', `{${team}}`, 'day', '2031-09-30'))).toBe(2 * 3600 + 3600);
    expect(await redis.client.ttl(redis.key('quota', `{${team}}`, 'month', '2031-09'))).toBe(2 * 3600 + 3600);
  });

  it('never exceeds the cap under concurrent reservations from two regions', async () => {
    const team = randomUUID();
    const services = [east.get(QuotaService), west.get(QuotaService)];
    const now = at('2031-10-10T10:00:00Z');
    const results = await Promise.allSettled(Array.from({ length: 80 }, (_, i) => services[i % 2].reserve(team, 'free', 3, now)));

    const granted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(granted).toHaveLength(33);
    expect(refused.every((r) => r.reason instanceof HeraldError && r.reason.code === 'daily_quota_exceeded')).toBe(true);
    expect((await quota.usage(team, 'free', now)).daily.used).toBe(99);
  });

  it('seeds a month without a counter from the backstop, once, and never over counters another process made', async () => {
    const team = randomUUID();
    const now = at('2031-11-20T10:00:00Z');
    const asked: [Date, Date][] = [];
    const backstop = async (monthStart: Date, dayStart: Date) => {
      asked.push([monthStart, dayStart]);
      return { month: 2_990, day: 95 };
    };
    const first = await quota.reserve(team, 'free', 4, now, backstop);
    expect([first.daily.used, first.monthly.used]).toEqual([99, 2_994]);
    expect(asked).toEqual([[at('2031-11-01T00:00:00Z'), at('2031-11-20T00:00:00Z')]]);

    await quota.reserve(team, 'free', 1, now, backstop);
    expect(asked).toHaveLength(1);
    expect((await refusal(quota.reserve(team, 'free', 1, now, backstop))).code).toBe('daily_quota_exceeded');
  });

  it('starts a month at 0 when the backstop cannot answer, and at 0 without one', async () => {
    const team = randomUUID();
    const now = at('2031-11-20T10:00:00Z');
    const failing = async (): Promise<{ month: number; day: number }> => {
      throw new Error('Postgres is down');
    };
    expect((await quota.reserve(team, 'free', 3, now, failing)).monthly.used).toBe(3);
    expect((await quota.reserve(randomUUID(), 'free', 3, now)).monthly.used).toBe(3);
  });

  it('applies the configured free daily limit and rejects bad input', async () => {
    const other = await isolatedConfig({ FREE_DAILY_LIMIT: '5' });
    const app = await region(other.config);
    try {
      const team = randomUUID();
      await app.get(QuotaService).reserve(team, 'free', 5);
      expect((await refusal(app.get(QuotaService).reserve(team, 'free', 1))).code).toBe('daily_quota_exceeded');
    } finally {
      await app.close();
      await other.cleanup();
    }
    await expect(quota.reserve(randomUUID(), 'free', 0)).rejects.toThrow(RangeError);
    await expect(quota.release(randomUUID(), { count: -1, reservedAt: new Date(), local: false })).rejects.toThrow(RangeError);
    await expect(quota.reserve(randomUUID(), 'enterprise' as PlanId, 1)).rejects.toThrow(RangeError);
  });
});
