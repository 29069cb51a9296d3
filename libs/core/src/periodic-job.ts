/**
 * A background pass that runs every `intervalMs` after the previous one finished (never two at
 * once), can also be run on demand (`runOnce`, shared with a pass already running), and stops
 * by waiting for the running pass. Used by the reconciler and the domain verifier.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<number>,
    private readonly intervalMs: () => number,
    private readonly onError: (error: Error) => void,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  runOnce(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      try {
        await this.runOnce();
      } catch (error) {
        this.onError(error as Error);
      }
      this.schedule();
    }, this.intervalMs());
  }
}
