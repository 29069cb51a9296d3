import type { RateLimitState } from './rate-limiter.service';

/** Past this many teams, entries that no longer limit anyone are dropped (memory stays bounded). */
const PRUNE_ABOVE = 10_000;
const PERIOD_MS = 1000;
/** Absorbs the rounding of PERIOD_MS / limit, so a same-instant burst of exactly `limit` passes. */
const SLACK_MS = 1e-6;

/**
 * The rate limiter of one process alone, for while Redis is unreachable: the same GCRA as the
 * Redis script (RateLimiter), on this process's monotonic clock. Each process limits only the
 * requests it sees, so the caller passes its share of the team's limit.
 */
export class LocalRateLimiter {
  /** Per team, the theoretical arrival time (ms on `clock`). */
  private readonly tats = new Map<string, number>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  consume(teamId: string, limit: number): RateLimitState {
    const now = this.clock();
    const interval = PERIOD_MS / limit;
    const newTat = Math.max(this.tats.get(teamId) ?? now, now) + interval;
    if (newTat - now > PERIOD_MS + SLACK_MS) {
      return { allowed: false, limit, remaining: 0, resetSeconds: wholeSeconds(newTat - PERIOD_MS - now) };
    }
    this.tats.set(teamId, newTat);
    if (this.tats.size > PRUNE_ABOVE) for (const [team, tat] of this.tats) if (tat <= now) this.tats.delete(team);
    const remaining = Math.max(0, Math.floor((PERIOD_MS + SLACK_MS - (newTat - now)) / interval));
    return { allowed: true, limit, remaining: Math.min(remaining, limit), resetSeconds: wholeSeconds(newTat - now) };
  }
}

/**
 * The emails one process grants alone while Redis is unreachable: per team and UTC day, at most
 * the allowance the caller gives. Not written back to Redis when it returns, so a Redis outage
 * can let a team past its quota by at most the processes' allowances for that day.
 */
export class LocalQuota {
  private readonly granted = new Map<string, { day: string; used: number }>();

  /** Grants `count` if the team's grants for `day` stay within `allowance`: the new total, or null. */
  reserve(teamId: string, day: string, count: number, allowance: number): number | null {
    const entry = this.granted.get(teamId);
    const used = (entry?.day === day ? entry.used : 0) + count;
    if (used > allowance) return null;
    this.granted.set(teamId, { day, used });
    if (this.granted.size > PRUNE_ABOVE) for (const [team, e] of this.granted) if (e.day !== day) this.granted.delete(team);
    return used;
  }

  release(teamId: string, day: string, count: number): void {
    const entry = this.granted.get(teamId);
    if (entry?.day === day) entry.used = Math.max(0, entry.used - count);
  }
}

function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / PERIOD_MS));
}
