/**
 * A small in-process map with a time to live and a size cap, for authenticated API keys. Only
 * keys that authenticated once get in, so the cap is a guard against unbounded growth rather
 * than a working-set tuning knob; past it, the oldest insertion goes first.
 */
export class ApiKeyCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }

  /** Whether the entry has less than a quarter of its time to live left: time to renew it, ahead of its expiry. */
  renewDue(key: string): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expiresAt - this.now() < this.ttlMs / 4;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
