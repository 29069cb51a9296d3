/** A claim a renewal found taken over. */
const LOST = -Infinity;

/** What a job's fence learns: the claim holds, another attempt took it over, or no renewal confirmed it in time. */
export type LeaseCheck = 'held' | 'taken_over' | 'unconfirmed';

/** The emails a renewal found still held by their claims' tokens. */
export type RenewClaims = (tokens: string[]) => Promise<{ emailId: string; token: string }[]>;

/**
 * The claims a worker holds while it works on their emails, by token and email, and until when
 * (on the monotonic clock) each surely lasts. A claim statement or renewal that starts at t sets
 * claimed_until to Postgres's now() plus the claim's lifetime, later than t plus that lifetime,
 * so this bound errs early. A renewal also says which claims were taken over (their rows carry
 * another token now): those never come back.
 *
 * `check` is the fence before an SMTP transaction. A claim that surely lasts a third of its
 * lifetime more is held (the keeper renews every third, so this is the usual answer, without a
 * query); otherwise only a renewal that starts now, or is already running, can confirm it.
 */
export class ClaimLeases {
  private readonly until = new Map<string, number>();
  private readonly marginMs: number;

  constructor(
    private readonly claimMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.marginMs = claimMs / 3;
  }

  /** A claim this worker works on from now, made by a statement that started at `claimedAt`; returns its key. */
  hold(token: string, emailId: string, claimedAt: number): string {
    const key = `${token} ${emailId}`;
    this.until.set(key, claimedAt + this.claimMs);
    return key;
  }

  /** The email's outcome is recorded (or given up): its claim is not this worker's to renew any more. */
  release(key: string): void {
    this.until.delete(key);
  }

  get size(): number {
    return this.until.size;
  }

  /** Renews every claim held, and learns which were taken over; answers how many tokens it renewed. */
  async renew(renewClaims: RenewClaims): Promise<number> {
    const keys = [...this.until.keys()];
    const tokens = [...new Set(keys.map((key) => key.slice(0, key.indexOf(' '))))];
    if (!tokens.length) return 0;
    const startedAt = this.now();
    const renewed = new Set((await renewClaims(tokens)).map((r) => `${r.token} ${r.emailId}`));
    // An email recorded meanwhile is no longer held either; its key is gone, or about to be.
    for (const key of keys) if (this.until.has(key)) this.until.set(key, renewed.has(key) ? startedAt + this.claimMs : LOST);
    return tokens.length;
  }

  /** The fence: `renewNow` runs a renewal (or joins the one running) when the claim's lease is too short to tell. */
  async check(key: string, renewNow: () => Promise<unknown>): Promise<LeaseCheck> {
    if (this.lasts(key)) return 'held';
    if (this.until.get(key) === LOST) return 'taken_over';
    try {
      await renewNow();
    } catch {
      return 'unconfirmed';
    }
    if (this.lasts(key)) return 'held';
    return this.until.get(key) === LOST ? 'taken_over' : 'unconfirmed';
  }

  private lasts(key: string): boolean {
    return (this.until.get(key) ?? LOST) - this.now() > this.marginMs;
  }
}
