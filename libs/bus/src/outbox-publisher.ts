import { Logger } from '@nestjs/common';
import { DebouncedBatch, PeriodicJob } from '@herald/core';

const CONFIRM_FLUSH_MS = 100;
const RELAY_INTERVAL_MS = 5_000;
/** An event unpublished for this long lost its publisher (a crash between commit and publish, NATS down). */
export const RELAY_AFTER_MS = 10_000;
export const RELAY_BATCH = 500;

/** What an outbox table gives the publisher: how to publish one of its events, and how to mark them. */
export interface OutboxStore<E> {
  /** Publishes one event; resolves once the stream acknowledged it. */
  publish(event: E): Promise<unknown>;
  describe(event: E): { id: string; type: string };
  markPublished(ids: string[]): Promise<void>;
  /**
   * One relay pass over the events left unpublished: publishes them with `publishAll` (which
   * answers the acknowledged ids), records that, and answers how many were published.
   */
  relay(publishAll: (events: E[]) => Promise<string[]>): Promise<number>;
}

/**
 * The publishing half of a transactional outbox, shared by the email events and the resource
 * events: events recorded with their fact are published after the commit and marked published
 * in batches; a periodic relay publishes whatever stayed unpublished. The event id is the
 * Nats-Msg-Id, and every consumer keys on it, so publishing an event twice is harmless.
 */
export class OutboxPublisher<E> {
  private readonly confirmations = new DebouncedBatch<string>(CONFIRM_FLUSH_MS, (ids) => this.markPublished(ids));
  private readonly inFlight = new Set<Promise<void>>();
  private readonly relayJob = new PeriodicJob(
    () => this.store.relay((events) => this.publishAll(events, 'relay')),
    () => RELAY_INTERVAL_MS,
    (error) => this.logger.warn(`event relay failed: ${error.message}`),
  );

  constructor(
    private readonly store: OutboxStore<E>,
    private readonly logger: Logger,
    /** Called for each acknowledged event (metrics). */
    private readonly onAcked: (event: E, path: 'direct' | 'relay') => void = () => undefined,
  ) {}

  start(): void {
    this.relayJob.start();
  }

  /** Stops the relay, lets publishes in flight finish and records their confirmations. */
  async close(): Promise<void> {
    await this.relayJob.stop();
    await Promise.allSettled([...this.inFlight]);
    await this.confirmations.close();
  }

  /** Publishes committed events in the background; resolves when done, never rejects (the relay covers a failure). */
  publish(events: E[]): Promise<void> {
    if (!events.length) return Promise.resolve();
    const work = this.publishAll(events, 'direct')
      .then((acked) => acked.forEach((id) => this.confirmations.add(id)))
      .finally(() => this.inFlight.delete(work));
    this.inFlight.add(work);
    return work;
  }

  /** One relay pass now; answers how many events it published. */
  relayOnce(): Promise<number> {
    return this.relayJob.runOnce();
  }

  /** Answers the ids of the events the stream acknowledged. */
  private async publishAll(events: E[], path: 'direct' | 'relay'): Promise<string[]> {
    const results = await Promise.allSettled(events.map((e) => this.store.publish(e)));
    return events.flatMap((event, i) => {
      const result = results[i];
      const { id, type } = this.store.describe(event);
      if (result.status === 'fulfilled') {
        this.onAcked(event, path);
        return [id];
      }
      this.logger.warn(`publish of ${type} ${id} failed; the relay will retry: ${String(result.reason)}`);
      return [];
    });
  }

  private async markPublished(ids: string[]): Promise<void> {
    try {
      await this.store.markPublished(ids);
    } catch (error) {
      // The relay publishes them again; consumers dedupe by event id.
      this.logger.warn(`could not mark ${ids.length} events published: ${(error as Error).message}`);
    }
  }
}
