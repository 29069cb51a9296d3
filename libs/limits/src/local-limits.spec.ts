import { LocalQuota, LocalRateLimiter } from './local-limits';

describe('LocalRateLimiter', () => {
  let now: number;
  let limiter: LocalRateLimiter;

  beforeEach(() => {
    now = 1_000_000;
    limiter = new LocalRateLimiter(() => now);
  });

  it('allows a burst of exactly `limit`, then one request per interval', () => {
    const burst = Array.from({ length: 6 }, () => limiter.consume('team', 5));
    expect(burst.map((s) => s.allowed)).toEqual([true, true, true, true, true, false]);
    expect(burst.map((s) => s.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(burst[5]).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 1 });

    now += 199; // an interval is 200 ms
    expect(limiter.consume('team', 5).allowed).toBe(false);
    now += 1;
    expect(limiter.consume('team', 5).allowed).toBe(true);
    expect(limiter.consume('team', 5).allowed).toBe(false);
  });

  it('keeps teams apart and refills completely after a second of quiet', () => {
    for (let i = 0; i < 3; i++) limiter.consume('a', 3);
    expect(limiter.consume('a', 3).allowed).toBe(false);
    expect(limiter.consume('b', 3).allowed).toBe(true);
    now += 1000;
    expect(limiter.consume('a', 3)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1 });
  });

  it('stays bounded in memory: idle teams are dropped once there are many', () => {
    for (let i = 0; i < 10_001; i++) limiter.consume(`team-${i}`, 1);
    now += 2000;
    limiter.consume('one more', 1);
    limiter.consume('and another', 1);
    expect((limiter as unknown as { tats: Map<string, number> }).tats.size).toBeLessThanOrEqual(2);
  });
});

describe('LocalQuota', () => {
  it('grants per team and day up to the allowance, a refusal counting nothing', () => {
    const quota = new LocalQuota();
    expect(quota.reserve('a', '2031-03-10', 30, 50)).toBe(30);
    expect(quota.reserve('a', '2031-03-10', 21, 50)).toBeNull();
    expect(quota.reserve('a', '2031-03-10', 20, 50)).toBe(50);
    expect(quota.reserve('b', '2031-03-10', 50, 50)).toBe(50);
    expect(quota.reserve('a', '2031-03-11', 50, 50)).toBe(50); // a new UTC day
  });

  it('gives a released reservation back within its day only, never below zero', () => {
    const quota = new LocalQuota();
    quota.reserve('a', '2031-03-10', 40, 50);
    quota.release('a', '2031-03-10', 30);
    expect(quota.reserve('a', '2031-03-10', 40, 50)).toBe(50);
    quota.release('a', '2031-03-09', 50); // yesterday's: nothing to give back today
    expect(quota.reserve('a', '2031-03-10', 1, 50)).toBeNull();
    quota.release('a', '2031-03-10', 500);
    expect(quota.reserve('a', '2031-03-10', 50, 50)).toBe(50);
  });
});
