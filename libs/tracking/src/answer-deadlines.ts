interface Waiter {
  deadline: number;
  resolve: (settled: boolean) => void;
}

/**
 * Answers waiting, each up to the same `ms`, for work to settle: one timer for all of them rather
 * than a timer per answer (the tracking host's busiest path). With one timeout, arrival order is
 * deadline order, so a sweep stops at the first waiter still in time.
 */
export class AnswerDeadlines {
  private readonly waiting = new Map<number, Waiter>();
  private next = 0;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly ms: number) {}

  /** Whether `work` settled within the timeout (false once it passed); never rejects. */
  settlesWithin(work: Promise<unknown>): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const key = this.next++;
      this.waiting.set(key, { deadline: performance.now() + this.ms, resolve });
      const settled = () => {
        if (this.waiting.delete(key)) resolve(true);
      };
      work.then(settled, settled);
      this.sweeper ??= setInterval(() => this.sweep(), Math.max(5, Math.min(250, this.ms / 4))).unref();
    });
  }

  private sweep(): void {
    const now = performance.now();
    for (const [key, waiter] of this.waiting) {
      if (waiter.deadline > now) break;
      this.waiting.delete(key);
      waiter.resolve(false);
    }
    if (!this.waiting.size && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }
}
