/**
 * Herald's clock: the wall-clock time every role and host agrees on. A time that leaves the
 * process is read here, not from `Date`: an event's time, a retry's due time that Postgres
 * compares with its `now()`, a webhook signature's timestamp, a DKIM signature's `t=`. It is the
 * host's clock corrected by the offset `ClockSync` (libs/database) measures against Postgres, so
 * that a host whose clock has drifted neither retries early or late nor signs webhooks that its
 * receivers reject as stale. Durations and local caches keep `Date.now()`: an offset cancels out.
 */
let offsetMs = 0;

export const heraldClock = {
  /** Milliseconds since the epoch, by Herald's clock. */
  nowMs: (): number => Date.now() + offsetMs,
  now: (): Date => new Date(Date.now() + offsetMs),
  /** How far Herald's clock is ahead of this host's (negative: behind). */
  offsetMs: (): number => offsetMs,
  /** Set by the clock sync; tests set it to act out a host whose clock is off. */
  setOffsetMs(ms: number): void {
    offsetMs = ms;
  },
};
