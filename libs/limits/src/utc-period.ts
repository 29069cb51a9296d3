/**
 * The UTC calendar day and month that quotas count in. Resend resets the daily quota at 00:00 UTC;
 * the monthly one follows the UTC calendar month so that every region agrees on the boundary.
 */
export interface UtcPeriod {
  /** `2026-04-03` for a day, `2026-04` for a month: part of the counter's Redis key. */
  readonly label: string;
  readonly start: Date;
  /** The first instant of the next period, when the counter resets. */
  readonly end: Date;
}

function assertValid(now: Date): void {
  if (Number.isNaN(now.getTime())) throw new RangeError('invalid date');
}

export function utcDay(now: Date): UtcPeriod {
  assertValid(now);
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  return { label: start.toISOString().slice(0, 10), start, end };
}

export function utcMonth(now: Date): UtcPeriod {
  assertValid(now);
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { label: start.toISOString().slice(0, 7), start, end };
}

/** Whole seconds from `now` until the period ends, at least 1 (for `retry-after`). */
export function secondsUntil(end: Date, now: Date): number {
  return Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));
}
