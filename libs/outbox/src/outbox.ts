import type { Logger } from '@nestjs/common';
import { DebouncedBatch, PeriodicJob } from '@herald/core';
import type { OutboxTuning } from './outbox.tuning';

/** How an outbox's entries reach the stream, and how their rows are confirmed. */
export interface OutboxChannel<E> {
  /** Publishes one entry; resolves once the stream acknowledged it. */
  publish(entry: E): Promise<unknown>;
  /** The entry's id (its Nats-Msg-Id) and type, for logs. */
  describe(entry: E): { id: string; type: string };
  /** The outbox row an entry belongs to, when a row holds several entries (by default its id). */
  rowOf?(entry: E): string;
  /** Records that these rows are on the stream (marks them published, or deletes them). */
  confirm(rows: string[]): Promise<void>;
}

/** Publishes entries; true for each the stream acknowledged. */
export type PublishEntries<E> = (entries: E[]) => Promise<boolean[]>;

/**
 * One relay pass over an outbox table, implemented by its repository: in one transaction, lock
 * up to `limit` due rows (FOR UPDATE SKIP LOCKED, so concurrent relays take different rows),
 * publish their entries, and record what was published. A relay that dies mid-pass rolls back
 * and its rows are taken again; consumers and JetStream dedupe key on the entry id.
 */
export type RelayPass<E> = (limit: number, publish: PublishEntries<E>) => Promise<{ rows: number; published: number }>;

/**
 * The transactional outbox, for the dispatch outbox, the email events and the resource events:
 * entries are written with their fact, published after the commit (`publish`) and confirmed in
 * batches; a periodic relay publishes whatever stayed unpublished (the publisher crashed between
 * commit and publish, or NATS was down), draining each of its passes in turn.
 */
export class Outbox<E> {
  private readonly confirmations: DebouncedBatch<string>;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly relayJob: PeriodicJob;

  constructor(
    private readonly name: string,
    private readonly channel: OutboxChannel<E>,
    private readonly passes: RelayPass<E>[],
    private readonly tuning: OutboxTuning,
    private readonly logger: Logger,
    /** Called for each acknowledged entry (metrics). */
    private readonly onAcked: (entry: E, path: 'direct' | 'relay') => void = () => undefined,
  ) {
    this.confirmations = new DebouncedBatch<string>(tuning.confirmFlushMs, (rows) => this.confirm(rows));
    this.relayJob = new PeriodicJob(
      () => this.relay(),
      () => tuning.relayIntervalMs,
      (error) => this.logger.warn(`${name} relay failed: ${error.message}`),
    );
  }

  /** Starts the periodic relay. */
  start(): void {
    this.relayJob.start();
  }

  /** Stops the relay, lets publishes in flight finish and records their confirmations. */
  async close(): Promise<void> {
    await this.relayJob.stop();
    await Promise.allSettled([...this.inFlight]);
    await this.confirmations.close();
  }

  /**
   * Publishes committed entries; resolves with which the stream acknowledged, never rejects (the
   * relay covers a failure). A row is confirmed once every entry of it was acknowledged.
   */
  publish(entries: E[]): Promise<boolean[]> {
    if (!entries.length) return Promise.resolve([]);
    const work = this.publishAll(entries, 'direct').then((acked) => {
      const rowOf = (e: E) => this.channel.rowOf?.(e) ?? this.channel.describe(e).id;
      const unconfirmed = new Set(entries.filter((_, i) => !acked[i]).map(rowOf));
      for (const row of new Set(entries.map(rowOf))) if (!unconfirmed.has(row)) this.confirmations.add(row);
      return acked;
    });
    const tracked = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    return tracked;
  }

  /** One relay run now (shared with one already running); answers how many entries it published. */
  relayOnce(): Promise<number> {
    return this.relayJob.runOnce();
  }

  private async relay(): Promise<number> {
    let total = 0;
    for (const pass of this.passes) {
      for (;;) {
        const { rows, published } = await pass(this.tuning.relayBatch, (entries) => this.publishAll(entries, 'relay'));
        total += published;
        if (rows < this.tuning.relayBatch || this.relayJob.isStopped) break;
      }
    }
    if (total) this.logger.log(`${this.name}: relayed ${total} unpublished entr${total === 1 ? 'y' : 'ies'}`);
    return total;
  }

  private async publishAll(entries: E[], path: 'direct' | 'relay'): Promise<boolean[]> {
    const results = await Promise.allSettled(entries.map((e) => this.channel.publish(e)));
    return results.map((r, i) => {
      if (r.status === 'rejected') {
        const { id, type } = this.channel.describe(entries[i]);
        this.logger.warn(`publish of ${type} ${id} failed; the relay will retry: ${String(r.reason)}`);
        return false;
      }
      this.onAcked(entries[i], path);
      return true;
    });
  }

  private async confirm(rows: string[]): Promise<void> {
    try {
      await this.channel.confirm(rows);
    } catch (error) {
      // Not fatal: the relay publishes them again, and consumers and JetStream dedupe by id.
      this.logger.warn(`could not confirm ${rows.length} ${this.name} row(s): ${(error as Error).message}`);
    }
  }
}
