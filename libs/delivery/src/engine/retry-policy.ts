/** When deferred recipients are tried again, and when Herald stops trying. */
export interface RetryPolicy {
  /** Delay before each retry, in seconds; the last one repeats. */
  scheduleSeconds: number[];
  /** Counted from when the email became due. */
  expirySeconds: number;
}

/**
 * The time of the next attempt after the `attempts`-th was deferred at `now`, or null when the
 * email has been trying for longer than the expiry: then it bounces (Transient). The last retry
 * is moved up to the expiry itself, so an email always gets a try at its very end. `notBefore`
 * (a destination's back-off) pushes the schedule back, so mail does not come back to be deferred
 * again while its destination is still suspended.
 */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, dueAt: Date, now: Date, notBefore?: Date): Date | null {
  const expiry = dueAt.getTime() + policy.expirySeconds * 1000;
  if (now.getTime() >= expiry) return null;
  const { scheduleSeconds } = policy;
  const delay = scheduleSeconds[Math.min(Math.max(attempts, 1), scheduleSeconds.length) - 1];
  return new Date(Math.min(Math.max(now.getTime() + delay * 1000, notBefore?.getTime() ?? 0), expiry));
}
