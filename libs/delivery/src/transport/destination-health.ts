export interface DestinationHealthOptions {
  /** Consecutive failures that suspend the destination. */
  failuresBeforeBackoff: number;
  /** The first suspension; it doubles on each further one. */
  backoffInitialMs: number;
  backoffMaxMs: number;
}

/** Why and until when a destination gets no connections. */
export interface Suspension {
  /** The reply new mail for the destination is deferred with. */
  reply: string;
  until: Date;
}

/**
 * Whether a destination is worth a connection: Postfix's dead-destination cache. Consecutive
 * failures of the destination itself (a connection refused or timed out, no greeting, a 421, a
 * session dropped) suspend it once they reach a threshold: its mail is deferred at once, without
 * a connection, until the back-off ends. Then it is on probation: one job at a time probes it; a
 * success clears everything, a failure suspends it again for twice as long (up to the maximum).
 */
export class DestinationHealth {
  private failures = 0;
  private trips = 0;
  private downUntil = 0;
  private lastFailure = '';

  constructor(
    private readonly key: string,
    private readonly options: DestinationHealthOptions,
    private readonly now: () => number = Date.now,
  ) {}

  succeeded(): void {
    this.failures = 0;
    this.trips = 0;
    this.downUntil = 0;
  }

  /** `reply` says what went wrong (an SMTP reply or a connection error), for the deferrals it causes. */
  failed(reply: string): void {
    this.failures++;
    this.lastFailure = reply;
    // Connections opened before the suspension fail together (a tarpit's all time out at once):
    // they count, but do not stretch the back-off.
    if (this.failures < this.options.failuresBeforeBackoff || this.now() < this.downUntil) return;
    this.downUntil = this.now() + Math.min(this.options.backoffInitialMs * 2 ** this.trips, this.options.backoffMaxMs);
    this.trips++;
  }

  suspension(): Suspension | null {
    if (this.now() >= this.downUntil) return null;
    const until = new Date(this.downUntil);
    return {
      reply: `451 4.4.1 Herald: ${this.key} in back-off until ${until.toISOString()} after ${this.failures} consecutive failures; last: ${this.lastFailure}`,
      until,
    };
  }

  /** The back-off is over but nothing has worked since: one connection at a time, the probe. */
  onProbation(): boolean {
    return this.failures >= this.options.failuresBeforeBackoff && this.now() >= this.downUntil;
  }

  /** Nothing worth remembering: no failure, or none for longer than the longest back-off. */
  isForgettable(): boolean {
    return this.failures === 0 || this.now() >= this.downUntil + this.options.backoffMaxMs;
  }
}
