/**
 * Collects items and hands them to `write` together, at most `delayMs` after the first of a
 * batch arrived, one write at a time; `close()` writes what is left. For bookkeeping off a hot
 * path (marking publishes confirmed), where one statement per item would cost more than the work.
 * `write` must not throw: it decides what a failure means.
 */
export class DebouncedBatch<T> {
  private items: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly delayMs: number,
    private readonly write: (items: T[]) => Promise<void>,
  ) {}

  add(item: T): void {
    this.items.push(item);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.writing = this.writing.then(() => this.drain());
    }, this.delayMs);
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.writing;
    await this.drain();
  }

  private async drain(): Promise<void> {
    const items = this.items;
    this.items = [];
    if (items.length) await this.write(items);
  }
}
