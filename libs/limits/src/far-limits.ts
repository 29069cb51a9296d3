import type { Plan } from './plans';

/**
 * The limits of a process whose Redis is in another region (REDIS_REGION, issue 15). Every send
 * is counted against the team's rate limit and quota in that one Redis, and a round trip there
 * is the regions' distance (~100 ms and more). A client near its domain's region should not wait
 * for it when the answer is not in doubt, so such a process answers from what it knows and
 * counts the send in Redis behind its answer; it asks Redis first only near a limit.
 *
 * Quota (FarQuotaView): a reservation is granted at once while the team's counters, as Redis last
 * answered them, plus what this process has granted since and not yet seen counted, stay more
 * than the margin below each cap, and this process has at most a tenth of the margin of the
 * team's emails waiting to be counted (farQuotaWindow). Otherwise it waits for Redis's exact
 * check, as near processes always do. What can pass a cap is what other processes grant within
 * one round trip beyond the margin: none while fewer than ten processes send for the team at once.
 */
export const FAR_QUOTA_MARGIN_MIN = 1_000;
/** The margin's share of a cap, when that is more than FAR_QUOTA_MARGIN_MIN. */
export const FAR_QUOTA_MARGIN_SHARE = 0.01;
/** Per team, the fewest emails this process may have granted and not yet seen counted in Redis. */
export const FAR_QUOTA_IN_FLIGHT_MIN = 100;

interface TeamView {
  day: string;
  month: string;
  /** The counters as Redis last answered them. */
  dailyUsed: number;
  monthlyUsed: number;
  /** Granted here, not yet answered by Redis. */
  inFlight: number;
}

/** Past this many teams, views of past periods are dropped. */
const PRUNE_ABOVE = 10_000;

export function farQuotaMargin(cap: number): number {
  return Math.max(FAR_QUOTA_MARGIN_MIN, Math.ceil(cap * FAR_QUOTA_MARGIN_SHARE));
}

/** Per team, the emails this process may have granted and not yet seen counted in Redis: a tenth of the monthly cap's margin, at least 100. */
export function farQuotaWindow(plan: Plan): number {
  return Math.max(FAR_QUOTA_IN_FLIGHT_MIN, Math.floor(farQuotaMargin(plan.monthlyEmails) / 10));
}

export class FarQuotaView {
  private readonly teams = new Map<string, TeamView>();

  /**
   * Grants `count` of the team's emails without asking Redis, if far enough from its caps: the
   * counters to report (as known, with this grant), or null to ask Redis first.
   */
  grant(teamId: string, day: string, month: string, plan: Plan, count: number): { dailyUsed: number; monthlyUsed: number } | null {
    const view = this.teams.get(teamId);
    if (!view || view.day !== day || view.month !== month) return null;
    if (view.inFlight + count > farQuotaWindow(plan)) return null;
    const monthly = view.monthlyUsed + view.inFlight + count;
    const daily = view.dailyUsed + view.inFlight + count;
    if (monthly > plan.monthlyEmails - farQuotaMargin(plan.monthlyEmails)) return null;
    if (plan.dailyEmails !== null && daily > plan.dailyEmails - farQuotaMargin(plan.dailyEmails)) return null;
    view.inFlight += count;
    return { dailyUsed: daily, monthlyUsed: monthly };
  }

  /** What Redis answered for the team (an exact reservation, or a granted one now counted). */
  learn(teamId: string, day: string, month: string, dailyUsed: number, monthlyUsed: number): void {
    const view = this.teams.get(teamId);
    if (view && view.day === day && view.month === month) {
      // Replies may arrive out of order: the counters only grow within a period (refunds aside).
      view.dailyUsed = Math.max(view.dailyUsed, dailyUsed);
      view.monthlyUsed = Math.max(view.monthlyUsed, monthlyUsed);
      return;
    }
    this.teams.set(teamId, { day, month, dailyUsed, monthlyUsed, inFlight: 0 });
    if (this.teams.size > PRUNE_ABOVE) for (const [team, v] of this.teams) if (v.day !== day) this.teams.delete(team);
  }

  /** A grant's count in Redis answered: counted (with the counters after it), or not (then the team is asked first again). */
  settled(teamId: string, day: string, month: string, count: number, counted: { dailyUsed: number; monthlyUsed: number } | null): void {
    const view = this.teams.get(teamId);
    if (!view || view.day !== day || view.month !== month) return;
    view.inFlight = Math.max(0, view.inFlight - count);
    if (counted) this.learn(teamId, day, month, counted.dailyUsed, counted.monthlyUsed);
    else this.teams.delete(teamId);
  }
}

/**
 * Rate limit (FarRateLimit): this process limits the team to its whole limit on its own clock
 * (the same GCRA as Redis's), so no process alone ever passes it, and counts each allowed request
 * in Redis behind its answer; once Redis refuses one, the team is refused here until Redis's
 * reset, without asking. What several processes together can let past the limit is at most what
 * they allow within one round trip to Redis.
 */
export class FarRateLimit {
  /** Per team, until when (ms on `clock`) Redis last said it is over its limit. */
  private readonly denied = new Map<string, number>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** The whole seconds until the team may send again, or 0 when Redis has not refused it. */
  deniedFor(teamId: string): number {
    const until = this.denied.get(teamId);
    if (until === undefined) return 0;
    const left = until - this.clock();
    if (left > 0) return Math.max(1, Math.ceil(left / 1000));
    this.denied.delete(teamId);
    return 0;
  }

  /** Redis refused one of the team's requests: it may send again in `resetMs`. */
  refused(teamId: string, resetMs: number): void {
    this.denied.set(teamId, this.clock() + resetMs);
    if (this.denied.size > PRUNE_ABOVE) {
      const now = this.clock();
      for (const [team, until] of this.denied) if (until <= now) this.denied.delete(team);
    }
  }
}
