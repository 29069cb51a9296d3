export interface GroupCommitOptions {
  /** Statements (groups) running at once; requests arriving meanwhile wait and share the next one. */
  maxInFlight: number;
  /** Most items in one group. */
  maxItems: number;
  /**
   * Start a group only at the end of the event loop's current phase (setImmediate) rather than
   * at the first submit, so the items of everything read in one turn of the loop (the requests
   * that arrived together) share one group. Without it, the first of them goes alone and the
   * rest wait for it.
   */
  gather?: boolean;
}

interface Pending<In, Out> {
  item: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: callers submit one item each and await its own result, while the items that
 * arrive while earlier groups are running are processed together by one call of `run` (one
 * round trip, one transaction). `run` returns one result per item, in order. A group that fails
 * is retried one item at a time, so an item that cannot be processed fails alone.
 */
export class GroupCommit<In, Out> {
  private readonly queue: Pending<In, Out>[] = [];
  private inFlight = 0;
  private gathering = false;

  constructor(
    private readonly options: GroupCommitOptions,
    private readonly run: (items: In[]) => Promise<Out[]>,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.options.gather) return this.pump();
      if (this.gathering) return;
      this.gathering = true;
      setImmediate(() => {
        this.gathering = false;
        this.pump();
      });
    });
  }

  get waiting(): number {
    return this.queue.length;
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length) {
      const group = this.queue.splice(0, this.options.maxItems);
      this.inFlight++;
      void this.process(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async process(group: Pending<In, Out>[]): Promise<void> {
    try {
      const results = await this.run(group.map((p) => p.item));
      if (results.length !== group.length) throw new Error(`group commit returned ${results.length} results for ${group.length} items`);
      group.forEach((p, i) => p.resolve(results[i]));
    } catch (error) {
      if (group.length === 1) return group[0].reject(error);
      await Promise.all(
        group.map((p) =>
          this.run([p.item]).then(
            ([result]) => p.resolve(result),
            (e: unknown) => p.reject(e),
          ),
        ),
      );
    }
  }
}
