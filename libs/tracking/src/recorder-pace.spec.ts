import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import { RecorderPace } from './recorder-pace';

const options = { lingerMs: 50, busyLingerMs: 1000, maxDeferMs: 5000 };
/** Keeps the event loop busy, as a burst of redirects would. */
const spin = (ms: number) => {
  for (const end = performance.now() + ms; performance.now() < end;);
};

describe('RecorderPace', () => {
  it('pauses longer while the event loop was saturated, for at most maxDeferMs since it last caught up', () => {
    const pace = new RecorderPace(options);
    const start = Date.now();
    spin(30);
    expect(pace.pauseMs(true, start)).toBe(1000);
    spin(30);
    expect(pace.pauseMs(true, start + 4000)).toBe(1000);
    spin(30);
    expect(pace.pauseMs(true, start + 6000)).toBe(50);
    // Caught up (nothing left waiting): the next burst may be deferred again.
    spin(30);
    expect(pace.pauseMs(false, start + 7000)).toBe(1000);
  });

  it('records at full pace when the event loop had time to spare', () => {
    // A loop busy 10% of the time since the last transaction. (Measured for real, with a 40 ms
    // timer, this read ≥ 90% in a CI run on a loaded machine: the test is about the decision.)
    const quiet = ((current?: EventLoopUtilization, last?: EventLoopUtilization) =>
      current && last
        ? { idle: 36, active: 4, utilization: 0.1 }
        : { idle: 0, active: 0, utilization: 0 }) as typeof performance.eventLoopUtilization;
    const pace = new RecorderPace(options, quiet);
    expect(pace.pauseMs(true)).toBe(50);
  });

  it('waits while the process stays saturated, and records once it is not (or the deferral has run out)', async () => {
    // Saturated at the first three looks, then quiet: three busy pauses, then the short one.
    let looks = 0;
    const utilization = ((current?: EventLoopUtilization, last?: EventLoopUtilization) =>
      current && last
        ? { idle: 0, active: 1, utilization: looks++ < 3 ? 1 : 0.1 }
        : { idle: 0, active: 0, utilization: 0 }) as typeof performance.eventLoopUtilization;
    const quick = { lingerMs: 5, busyLingerMs: 40, maxDeferMs: 60_000 };
    const started = performance.now();
    await new RecorderPace(quick, utilization).wait(() => true);
    expect(looks).toBe(4);
    expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 40 + 5 - 2);

    // Always saturated: it stops deferring once maxDeferMs has passed since it last caught up.
    const saturated = ((current?: EventLoopUtilization, last?: EventLoopUtilization) =>
      current && last ? { idle: 0, active: 1, utilization: 1 } : { idle: 0, active: 0, utilization: 0 }) as typeof performance.eventLoopUtilization;
    const pace = new RecorderPace({ ...quick, maxDeferMs: 100 }, saturated);
    const since = performance.now();
    await pace.wait(() => true);
    expect(performance.now() - since).toBeGreaterThanOrEqual(100);
  });

  it('never defers when maxDeferMs is 0', () => {
    const pace = new RecorderPace({ ...options, maxDeferMs: 0 });
    spin(30);
    expect(pace.pauseMs(true)).toBe(50);
  });
});
