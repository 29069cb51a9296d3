import { type EventLoopUtilization, performance } from 'node:perf_hooks';

export interface RecorderPaceOptions {
  /** The pause after a transaction: what arrives meanwhile shares the next one. */
  lingerMs: number;
  /** The pause while the process is saturated. */
  busyLingerMs: number;
  /** The longest the recorder keeps deferring since it last caught up. */
  maxDeferMs: number;
}

/** Event-loop utilization since the last transaction at or above which the process counts as saturated. */
const SATURATED = 0.9;

/**
 * How long the tracking recorder pauses after a transaction. Recording is background work: the
 * hits are durable on the stream already. While the process is saturated (its event loop busy
 * ≥ 90% since the last transaction: answering a burst of redirects), the recorder pauses longer,
 * leaves the burst on the stream and catches up in large transactions once it has passed, instead
 * of competing with the redirects for the CPU. It defers at most `maxDeferMs` from the moment it
 * last had nothing waiting, so a sustained load is still recorded, only later.
 */
export class RecorderPace {
  private last: EventLoopUtilization;
  private caughtUpAt = Date.now();

  /** `utilization`: the event loop's measure (performance.eventLoopUtilization; a unit test gives its own). */
  constructor(
    private readonly options: RecorderPaceOptions,
    private readonly utilization: typeof performance.eventLoopUtilization = performance.eventLoopUtilization.bind(performance),
  ) {
    this.last = this.utilization();
  }

  /** The pause after a transaction; `backlog`: whether hits were left waiting for the next one. */
  pauseMs(backlog: boolean, now = Date.now()): number {
    const current = this.utilization();
    const busy = this.utilization(current, this.last).utilization >= SATURATED;
    this.last = current;
    if (!backlog) this.caughtUpAt = now;
    return busy && now - this.caughtUpAt < this.options.maxDeferMs ? this.options.busyLingerMs : this.options.lingerMs;
  }

  /**
   * Waits out the pause after a transaction, and goes on waiting while the process stays
   * saturated (for at most maxDeferMs since it last caught up): a burst is left on the stream
   * whole, instead of a transaction's worth of it recorded after each busy pause.
   */
  async wait(backlog: () => boolean): Promise<void> {
    for (;;) {
      const ms = this.pauseMs(backlog());
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (ms === this.options.lingerMs) return;
    }
  }
}
