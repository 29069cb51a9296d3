import { Inject, Injectable, Logger } from '@nestjs/common';
import { isRedisUnavailable, RedisScript, RedisService, RedisUnavailableError, integerReply } from '@herald/redis';
import { HeraldError } from '@herald/core';
import { LocalQuota } from './local-limits';
import { Plan, PlanId, planById } from './plans';
import { secondsUntil, utcDay, utcMonth, UtcPeriod } from './utc-period';
import { FarQuotaView } from './far-limits';
import { LIMITS_CONFIG, LimitsConfig, redisIsFar } from './limits.config';

export interface QuotaCounter<L extends number | null> {
  used: number;
  limit: L;
  resetsAt: Date;
}

/** A team's email counts (one per recipient) in the current UTC day and month. */
export interface QuotaUsage {
  /** Counted on every plan (for usage reports); `limit` is null when the plan has no daily cap. */
  daily: QuotaCounter<number | null>;
  monthly: QuotaCounter<number>;
}

/** What `release` needs to refund a reservation. */
export interface Reservation {
  count: number;
  reservedAt: Date;
  /**
   * Granted by this process alone while Redis was unreachable (see QuotaService). The counts of
   * its QuotaState are then this process's own grants of the day, not the team's.
   */
  local: boolean;
  /**
   * Granted before Redis counted it (Redis in another region, far from the caps: far-limits.ts):
   * resolves once Redis has answered, true if it counted the reservation. A refund waits for it.
   */
  counted?: Promise<boolean>;
}

/** A granted reservation: the counts after it, and what `release` needs to refund it. */
export interface QuotaState extends QuotaUsage, Reservation {}

/**
 * What the team's durable record says it sent (recipients accepted) since the start of the UTC
 * month and of the UTC day: the counters are seeded from it when Redis has none for the month
 * (a new month, or a Redis that came back empty), so that losing Redis does not reset a quota.
 */
export type UsageBackstop = (monthStart: Date, dayStart: Date) => Promise<{ month: number; day: number }>;

/**
 * Counters outlive their period by this much so that a process whose clock lags the others a
 * little, or a refund of a reservation made just before midnight, still finds its counter.
 */
const KEY_MARGIN_SECONDS = 3600;

const UNCHECKED =
  'Email quotas cannot be checked right now, and nothing was sent. ' + 'Please retry after the number of seconds in the Retry-After header.';

/**
 * KEYS[1] day counter, KEYS[2] month counter; ARGV[1] count, ARGV[2] daily limit (-1: none),
 * ARGV[3] monthly limit, ARGV[4] day key TTL, ARGV[5] month key TTL, ARGV[6] 1 when a missing
 * month counter must be seeded first.
 * Returns { verdict (0 granted, 1 daily exceeded, 2 monthly exceeded, 3 not seeded: nothing
 * counted), daily used, monthly used }.
 * The monthly verdict wins when both are exceeded: retrying tomorrow would not help.
 * TTLs are relative (EXPIRE, not EXPIREAT) so that they do not depend on the Redis clock agreeing
 * with the caller's, which chose the period.
 */
const RESERVE = new RedisScript(`
local count = tonumber(ARGV[1])
local dailyLimit = tonumber(ARGV[2])
local monthlyLimit = tonumber(ARGV[3])
local monthRaw = redis.call('GET', KEYS[2])
if not monthRaw and ARGV[6] == '1' then return { 3, 0, 0 } end
local daily = tonumber(redis.call('GET', KEYS[1]) or '0')
local monthly = tonumber(monthRaw or '0')
if monthly + count > monthlyLimit then return { 2, daily, monthly } end
if dailyLimit >= 0 and daily + count > dailyLimit then return { 1, daily, monthly } end
daily = redis.call('INCRBY', KEYS[1], count)
redis.call('EXPIRE', KEYS[1], ARGV[4])
monthly = redis.call('INCRBY', KEYS[2], count)
redis.call('EXPIRE', KEYS[2], ARGV[5])
return { 0, daily, monthly }
`);

/**
 * KEYS as RESERVE; ARGV[1] day count, ARGV[2] month count, ARGV[3] day TTL, ARGV[4] month TTL.
 * Sets counters that do not exist (another process may have seeded or counted since).
 */
const SEED = new RedisScript(`
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'NX', 'EX', ARGV[4])
return 0
`);

/**
 * Refunds only counters that still exist (a period that has expired no longer limits anyone) and
 * never goes below zero; KEEPTTL keeps the counter expiring with its period.
 */
const RELEASE = new RedisScript(`
local count = tonumber(ARGV[1])
for i = 1, 2 do
  local used = redis.call('GET', KEYS[i])
  if used then
    local left = tonumber(used) - count
    if left < 0 then left = 0 end
    redis.call('SET', KEYS[i], left, 'KEEPTTL')
  end
end
return 0
`);

/**
 * Daily and monthly email quotas, counted per recipient in Redis and shared by every region.
 *
 * `reserve` is check-and-increment in one Lua script, so concurrent sends from any number of
 * processes never take a team past its cap, and a reservation that does not fit entirely is
 * refused without counting anything. Refusal is thrown as a HeraldError
 * (`daily_quota_exceeded` / `monthly_quota_exceeded`, with retryAfterSeconds until the UTC day or
 * month resets) because the send cannot go on; every transport already maps those codes.
 *
 * The period is chosen by the caller's clock (`now`): the counter keys must be named before the
 * script runs (Redis Cluster routes by declared keys), and a refund must hit the period the
 * reservation was made in, which `reservedAt` records.
 *
 * While Redis is unreachable, each process grants on its own (LocalQuota) up to
 * LIMITS_FALLBACK_SHARE of a day's budget per team and UTC day (the daily cap, or a thirtieth of
 * the monthly quota), and answers 503 `service_unavailable` beyond it: mail keeps flowing
 * through a short outage, and what an outage can let past a quota stays bounded.
 */
@Injectable()
export class QuotaService {
  private readonly logger = new Logger(QuotaService.name);
  private readonly local = new LocalQuota();
  /** With Redis in another region: what this process knows of each team's counters (far-limits.ts). */
  private readonly far: FarQuotaView | null;

  constructor(
    private readonly redis: RedisService,
    @Inject(LIMITS_CONFIG.token) private readonly config: LimitsConfig,
  ) {
    this.far = redisIsFar(config) ? new FarQuotaView() : null;
  }

  /**
   * With a `backstop`, a month without a counter in Redis is first seeded from what the team's
   * record says it sent this month and today (once per team and month, or after Redis lost its
   * data); without one, such a month starts at 0.
   */
  async reserve(teamId: string, plan: PlanId, count: number, now: Date = new Date(), backstop?: UsageBackstop): Promise<QuotaState> {
    assertCount(count);
    const limits = this.plan(plan);
    if (!this.far) return this.reserveInRedis(teamId, limits, count, now, backstop);
    const [day, month, far] = [utcDay(now), utcMonth(now), this.far];
    const granted = far.grant(teamId, day.label, month.label, limits, count);
    if (!granted) {
      const state = await this.reserveInRedis(teamId, limits, count, now, backstop);
      if (!state.local) far.learn(teamId, day.label, month.label, state.daily.used, state.monthly.used);
      return state;
    }
    const counted = this.reserveInRedis(teamId, limits, count, now, backstop).then(
      (state) => {
        far.settled(teamId, day.label, month.label, count, state.local ? null : { dailyUsed: state.daily.used, monthlyUsed: state.monthly.used });
        // Granted by this process alone meanwhile (Redis unreachable): refunded from there, as it was not counted in Redis.
        if (state.local) this.local.release(teamId, day.label, count);
        return !state.local;
      },
      (error: Error) => {
        far.settled(teamId, day.label, month.label, count, null);
        this.logger.warn(`team ${teamId}: ${count} email(s) granted ahead of Redis were not counted there: ${error.message}`);
        return false;
      },
    );
    return { ...this.describe(limits, day, month, granted.dailyUsed, granted.monthlyUsed), count, reservedAt: now, local: false, counted };
  }

  private async reserveInRedis(teamId: string, limits: Plan, count: number, now: Date, backstop?: UsageBackstop): Promise<QuotaState> {
    const day = utcDay(now);
    const month = utcMonth(now);
    const keys = this.keys(teamId, day, month);
    const ttls = [secondsUntil(day.end, now) + KEY_MARGIN_SECONDS, secondsUntil(month.end, now) + KEY_MARGIN_SECONDS];
    const run = (seedFirst: boolean) =>
      RESERVE.run(this.redis, keys, [count, limits.dailyEmails ?? -1, limits.monthlyEmails, ttls[0], ttls[1], seedFirst ? 1 : 0]);
    let reply: unknown;
    try {
      reply = await run(backstop !== undefined);
      if (integerReply(reply, 3)[0] === 3) {
        await this.seed(teamId, keys, ttls, month.start, day.start, backstop!);
        reply = await run(false);
      }
    } catch (error) {
      if (!isRedisUnavailable(error)) throw error;
      return this.reserveLocally(teamId, limits, count, now);
    }
    const [verdict, dailyUsed, monthlyUsed] = integerReply(reply, 3);
    if (verdict === 2) {
      throw new HeraldError(
        'monthly_quota_exceeded',
        `You have reached your monthly email sending quota of ${limits.monthlyEmails} emails ` +
          `(${monthlyUsed} used, this request needs ${count}). ` +
          'Upgrade your plan or wait until the quota resets on the first day of next month (UTC).',
        secondsUntil(month.end, now),
      );
    }
    if (verdict === 1) {
      throw new HeraldError(
        'daily_quota_exceeded',
        `You have reached your daily email sending quota of ${limits.dailyEmails} emails ` +
          `(${dailyUsed} used, this request needs ${count}). ` +
          'Upgrade your plan to remove the daily quota or wait until it resets at 00:00 UTC.',
        secondsUntil(day.end, now),
      );
    }
    return {
      ...this.describe(limits, day, month, dailyUsed, monthlyUsed),
      count,
      reservedAt: now,
      local: false,
    };
  }

  /**
   * Gives back a reservation whose send failed, in the day and month it was made in, where it was
   * made (Redis or this process). Call it once per reservation: counters are plain numbers and
   * cannot tell a repeated refund apart. A count of 0 (nothing was reserved) is a no-op. Never
   * fails for want of Redis: a refund that cannot be made leaves the count too high, the safe side.
   */
  async release(teamId: string, { count, reservedAt, local, counted }: Reservation): Promise<void> {
    if (count === 0) return;
    assertCount(count);
    if (local) return this.local.release(teamId, utcDay(reservedAt).label, count);
    // Granted ahead of Redis: refunded there once counted there, and not at all if it was not.
    if (counted && !(await counted)) return;
    try {
      await RELEASE.run(this.redis, this.keys(teamId, utcDay(reservedAt), utcMonth(reservedAt)), [count]);
    } catch (error) {
      if (!isRedisUnavailable(error)) throw error;
      this.logger.warn(`quota refund of ${count} for team ${teamId} lost: ${error.reason}`);
    }
  }

  async usage(teamId: string, plan: PlanId, now: Date = new Date()): Promise<QuotaUsage> {
    const day = utcDay(now);
    const month = utcMonth(now);
    const [daily, monthly] = await this.redis.command((client) => client.mGet(this.keys(teamId, day, month)));
    return this.describe(this.plan(plan), day, month, Number(daily ?? 0), Number(monthly ?? 0));
  }

  /** Seeds a team's missing counters from its record; without the record, the month starts at 0 (logged). */
  private async seed(
    teamId: string,
    keys: [string, string],
    ttls: number[],
    monthStart: Date,
    dayStart: Date,
    backstop: UsageBackstop,
  ): Promise<void> {
    let used = { month: 0, day: 0 };
    try {
      used = await backstop(monthStart, dayStart);
    } catch (error) {
      this.logger.warn(`quota counters of team ${teamId} start at 0: its sent count could not be read (${(error as Error).message})`);
    }
    if (used.month > 0) this.logger.log(`quota counters of team ${teamId} seeded from its record: ${used.month} this month, ${used.day} today`);
    await SEED.run(this.redis, keys, [used.day, used.month, ttls[0], ttls[1]]);
  }

  private reserveLocally(teamId: string, limits: Plan, count: number, now: Date): QuotaState {
    const day = utcDay(now);
    const dayBudget = limits.dailyEmails ?? Math.ceil(limits.monthlyEmails / 30);
    const used = this.local.reserve(teamId, day.label, count, Math.ceil(dayBudget * this.config.LIMITS_FALLBACK_SHARE));
    if (used === null) throw new RedisUnavailableError('local quota allowance used up', UNCHECKED);
    return { ...this.describe(limits, day, utcMonth(now), used, used), count, reservedAt: now, local: true };
  }

  private plan(id: PlanId): Plan {
    const plan = planById(id, this.config);
    if (!plan) throw new RangeError(`unknown plan "${id}"`);
    return plan;
  }

  /**
   * The team id is a hash tag (`{...}`) so both counters live in one Redis Cluster slot, which a
   * script touching both requires.
   */
  private keys(teamId: string, day: UtcPeriod, month: UtcPeriod): [string, string] {
    return [this.redis.key('quota', `{${teamId}}`, 'day', day.label), this.redis.key('quota', `{${teamId}}`, 'month', month.label)];
  }

  private describe(plan: Plan, day: UtcPeriod, month: UtcPeriod, dailyUsed: number, monthlyUsed: number): QuotaUsage {
    return {
      daily: { used: dailyUsed, limit: plan.dailyEmails, resetsAt: day.end },
      monthly: { used: monthlyUsed, limit: plan.monthlyEmails, resetsAt: month.end },
    };
  }
}

function assertCount(count: number): void {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`recipient count must be a positive integer, got ${count}`);
}
