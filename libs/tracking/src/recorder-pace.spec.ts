import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import { RecorderPace } from './recorder-pace';

const options = { lingerMs: 50, busyLingerMs: 1000, maxDeferMs: 5000 };

/** An event-loop measure reading `busy()` for every window (the real one only gives the boundaries). */
const measured = (busy: () => number) =>
  ((current?: EventLoopUtilization, last?: EventLoopUtilization) =>
    current && last
      ? { idle: 0, active: 1, utilization: busy() }
      : { idle: 0, active: 0, utilization: 0 }) as typeof performance.eventLoopUtilization;

describe('RecorderPace', () => {
  it('goes on pausing while the loop was busy during the pause, for at most maxDeferMs since it last caught up', () => {
    const pace = new RecorderPace(options);
    const start = Date.now();
    expect(pace.defers(0.9, true, start)).toBe(true);
    expect(pace.defers(0.6, true, start + 4000)).toBe(true);
    expect(pace.defers(0.9, true, start + 6000)).toBe(false);
    // Caught up (nothing left waiting): no pause beyond the linger, and the next burst may be deferred again.
    expect(pace.defers(0.9, false, start + 7000)).toBe(false);
    expect(pace.defers(0.9, true, start + 7500)).toBe(true);
  });

  it('records at full pace when the loop had time to spare during the pause', () => {
    const pace = new RecorderPace(options);
    expect(pace.defers(0.1, true)).toBe(false);
    expect(pace.defers(0.49, true)).toBe(false);
  });

  it('waits while the process stays busy, and records once it is not (or the deferral has run out)', async () => {
    // Busy during the first three pauses, then quiet: the linger, two busy pauses, then it returns.
    let looks = 0;
    const quick = { lingerMs: 5, busyLingerMs: 40, maxDeferMs: 60_000 };
    const started = performance.now();
    await new RecorderPace(
      quick,
      measured(() => (looks++ < 3 ? 1 : 0.1)),
    ).wait(() => true);
    expect(looks).toBe(4);
    expect(performance.now() - started).toBeGreaterThanOrEqual(5 + 3 * 40 - 2);

    // Always busy: it stops deferring once maxDeferMs has passed since it last caught up.
    const pace = new RecorderPace(
      { ...quick, maxDeferMs: 100 },
      measured(() => 1),
    );
    const since = performance.now();
    await pace.wait(() => true);
    expect(performance.now() - since).toBeGreaterThanOrEqual(100);
  });

  it('measures the pause, not the transaction before it: the window starts when the pause does', async () => {
    // Each reading is stamped with when it was taken; a window is judged only from its start.
    const windows: number[] = [];
    const stamped = ((current?: EventLoopUtilization, last?: EventLoopUtilization) => {
      if (current && last) windows.push((last as EventLoopUtilization & { at: number }).at);
      return { idle: 0, active: 0, utilization: 0, at: performance.now() };
    }) as typeof performance.eventLoopUtilization;
    const pace = new RecorderPace({ lingerMs: 5, busyLingerMs: 1000, maxDeferMs: 60_000 }, stamped);
    await new Promise((resolve) => setTimeout(resolve, 30)); // a transaction's work, before the pause
    const pausedAt = performance.now();
    await pace.wait(() => true);
    expect(windows).toHaveLength(1);
    expect(windows[0]).toBeGreaterThanOrEqual(pausedAt);
  });

  it('never pauses past the linger when nothing is waiting, however busy the loop', async () => {
    const started = performance.now();
    await new RecorderPace(
      { lingerMs: 5, busyLingerMs: 1000, maxDeferMs: 60_000 },
      measured(() => 1),
    ).wait(() => false);
    expect(performance.now() - started).toBeLessThan(900);
  });

  it('never defers when maxDeferMs is 0', () => {
    const pace = new RecorderPace({ ...options, maxDeferMs: 0 });
    expect(pace.defers(1, true)).toBe(false);
  });
});
