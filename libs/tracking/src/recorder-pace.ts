import { performance } from 'node:perf_hooks';

export interface RecorderPaceOptions {
  /** The pause after a transaction: what arrives meanwhile shares the next one. */
  lingerMs: number;
  /** The pause while the process is saturated. */
  busyLingerMs: number;
  /** The longest the recorder keeps deferring since it last caught up. */
  maxDeferMs: number;
}

/**
 * Event-loop utilization during the recorder's pause at or above which the process counts as
 * busy answering hits. Recording a hit costs the process about 0.6× what answering it does (the
 * tracking bench: ~70 µs against ~115), so once answering keeps the loop half busy, recording
 * alongside would saturate it and slow the answers; below that there is room for both.
 */
const BUSY = 0.5;

/**
 * How long the tracking recorder pauses after a transaction. Recording is background work: the
 * hits are durable on the stream already. While the process is busy answering a burst of
 * redirects (its event loop ≥ 50% busy during the recorder's pause, so the recorder's own work
 * does not count), the recorder goes on pausing, leaves the burst on the stream and catches up in
 * large transactions once it has passed, instead of competing with the redirects for the CPU. It
 * defers at most `maxDeferMs` from the moment it last had nothing waiting, so a sustained load is
 * still recorded, only later.
 */
export class RecorderPace {
  private caughtUpAt = Date.now();

  /** `utilization`: the event loop's measure (performance.eventLoopUtilization; a unit test gives its own). */
  constructor(
    private readonly options: RecorderPaceOptions,
    private readonly utilization: typeof performance.eventLoopUtilization = performance.eventLoopUtilization.bind(performance),
  ) {}

  /**
   * Whether to go on pausing, given how busy the loop was (0–1) during the pause just ended and
   * whether hits were left waiting for the next transaction.
   */
  defers(busy: number, backlog: boolean, now = Date.now()): boolean {
    // Nothing waiting: nothing to leave on the stream, and the transaction just committed is
    // answered (its messages acked) only once this pause ends.
    if (!backlog) {
      this.caughtUpAt = now;
      return false;
    }
    return busy >= BUSY && now - this.caughtUpAt < this.options.maxDeferMs;
  }

  /**
   * Waits out the pause after a transaction (lingerMs), and goes on waiting (busyLingerMs at a
   * time) while the process stays busy during it, for at most maxDeferMs since it last caught up:
   * a burst is left on the stream whole, instead of a transaction's worth of it recorded after
   * each busy pause.
   */
  async wait(backlog: () => boolean): Promise<void> {
    for (let ms = this.options.lingerMs; ; ms = this.options.busyLingerMs) {
      const before = this.utilization();
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (!this.defers(this.utilization(this.utilization(), before).utilization, backlog())) return;
    }
  }
}
