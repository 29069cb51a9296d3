import { AdaptiveConcurrency, type AttemptObservation, capacitySignal } from './adaptive-concurrency';

const bounds = { floor: 4, cap: 64 };

/** Feeds `count` answers of `latencyMs`, one every millisecond from `t`; returns the time after the last. */
function feed(c: AdaptiveConcurrency, t: number, count: number, o: Partial<AttemptObservation> = {}): number {
  for (let i = 0; i < count; i++, t++) {
    const latencyMs = o.latencyMs ?? 5;
    c.observe({ signal: 'success', saturated: true, latencyMs, startedAt: t - latencyMs, ...o }, t);
  }
  return t;
}

describe('capacitySignal', () => {
  const response = (statusCode: number) => ({ kind: 'response' as const, statusCode, retryAfter: undefined, excerpt: '', durationMs: 1 });

  it('reads 2xx as success; timeouts, connection errors, 5xx and 429 as overload; the rest as nothing', () => {
    expect([200, 204, 299].map((s) => capacitySignal(response(s)))).toEqual(['success', 'success', 'success']);
    expect([429, 500, 503, 504].map((s) => capacitySignal(response(s)))).toEqual(['overload', 'overload', 'overload', 'overload']);
    expect(capacitySignal({ kind: 'error', error: 'timed out after 15000 ms', durationMs: 15_000 })).toBe('overload');
    expect(capacitySignal({ kind: 'error', error: 'connect ECONNREFUSED', durationMs: 1 })).toBe('overload');
    expect([301, 400, 404, 410].map((s) => capacitySignal(response(s)))).toEqual(['neutral', 'neutral', 'neutral', 'neutral']);
    expect(capacitySignal({ kind: 'refused', error: 'refused: private address', durationMs: 0 })).toBe('neutral');
  });
});

describe('AdaptiveConcurrency', () => {
  it('starts at the floor and refuses bounds that make no sense', () => {
    expect(new AdaptiveConcurrency(bounds, 0).limit).toBe(4);
    expect(() => new AdaptiveConcurrency({ floor: 8, cap: 4 }, 0)).toThrow(/bounds/);
    expect(() => new AdaptiveConcurrency({ floor: 0, cap: 4 }, 0)).toThrow(/bounds/);
  });

  it('grows by one per success in slow start, up to the cap and no further', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    feed(c, 1, 10);
    expect(c.limit).toBe(14);
    feed(c, 11, 500);
    expect(c.limit).toBe(64);
  });

  it('does not grow on answers while the limit is not in use (no backlog)', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    feed(c, 1, 1_000, { saturated: false });
    expect(c.limit).toBe(4);
  });

  it('halves on overload, not below the floor, once per round of requests', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    const t = feed(c, 1, 40);
    expect(c.limit).toBe(44);
    // 44 requests in flight when the endpoint starts failing: the first failure cuts, the others were sent before it.
    for (let i = 0; i < 44; i++) c.observe({ signal: 'overload', saturated: true, latencyMs: 30, startedAt: t - 30 + i / 100 }, t + i);
    expect(c.limit).toBe(22);
    // Failures of requests sent after the cut cut again: 22 → 11 → 5 → 4.
    let now = t + 100;
    for (const expected of [11, 5, 4, 4]) {
      c.observe({ signal: 'overload', saturated: true, latencyMs: 1, startedAt: now - 1 }, now);
      expect(c.limit).toBe(expected);
      now += 10;
    }
  });

  it('grows by about one per round after a cut (additive increase)', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    let t = feed(c, 1, 28);
    expect(c.limit).toBe(32);
    c.observe({ signal: 'overload', saturated: true, latencyMs: 5, startedAt: t - 5 }, t++);
    expect(c.limit).toBe(16);
    t = feed(c, t, 17);
    expect(c.limit).toBe(17);
    t = feed(c, t, 18);
    expect(c.limit).toBe(18);
    feed(c, t, 10 * 20);
    expect(c.limit).toBeGreaterThanOrEqual(26);
    expect(c.limit).toBeLessThanOrEqual(28);
  });

  it('neither grows nor shrinks on answers that say nothing about load (3xx, 4xx, refused)', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    for (let t = 1; t < 200; t++) c.observe({ signal: 'neutral', saturated: true, latencyMs: 1, startedAt: t - 1 }, t);
    expect(c.limit).toBe(4);
  });

  it('stops growing while latency climbs over twice its baseline, and grows again once it is back', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    let t = feed(c, 1, 6, { latencyMs: 20 });
    expect(c.baselineMs).toBe(20);
    expect(c.limit).toBe(10);
    // Latency climbs to 200 ms: the recent average passes 2 × 20 + 10 within a few answers, then the limit holds.
    t = feed(c, t, 200, { latencyMs: 200 });
    const held = c.limit;
    expect(held).toBeLessThan(16);
    t = feed(c, t, 200, { latencyMs: 200 });
    expect(c.limit).toBe(held);
    // Back to 20 ms: growth resumes, additively (slow start ended).
    t = feed(c, t, 300, { latencyMs: 20 });
    expect(c.limit).toBeGreaterThan(held);
    expect(c.limit).toBeLessThan(held + 30);
  });

  it('takes its baseline from the last 15–30 s, so an endpoint that got slower for good can grow again', () => {
    const c = new AdaptiveConcurrency(bounds, 0);
    feed(c, 1, 4, { latencyMs: 10 });
    let t = 1_000;
    // From now on it always takes 100 ms: growth holds until the 10 ms samples have aged out.
    for (; t < 40_000; t += 50) c.observe({ signal: 'success', saturated: true, latencyMs: 100, startedAt: t - 100 }, t);
    expect(c.baselineMs).toBe(100);
    const before = c.limit;
    for (const end = t + 5_000; t < end; t += 10) c.observe({ signal: 'success', saturated: true, latencyMs: 100, startedAt: t - 100 }, t);
    expect(c.limit).toBeGreaterThan(before);
  });

  it('remembers when it last saw an answer', () => {
    const c = new AdaptiveConcurrency(bounds, 7);
    expect(c.lastObservedAt).toBe(7);
    c.observe({ signal: 'neutral', saturated: false, latencyMs: 1, startedAt: 41 }, 42);
    expect(c.lastObservedAt).toBe(42);
  });
});
