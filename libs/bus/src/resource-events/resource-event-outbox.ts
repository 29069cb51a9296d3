import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { DebouncedBatch, PeriodicJob } from '@herald/core';
import { EventPublisher, type HeraldEvent } from '../event-publisher';
import { ResourceEventsRepository } from './resource-events.repository';

const CONFIRM_FLUSH_MS = 100;
/** An event unpublished for this long lost its publisher (a crash between commit and publish). */
const RELAY_AFTER_MS = 10_000;
const RELAY_INTERVAL_MS = 5_000;
const RELAY_BATCH = 500;

/**
 * The transactional outbox of the events of domains and suppressions (the email events have
 * their own, in the delivery engine). A change records its events in its own transaction, so
 * the fact and its event commit together or not at all; they are published after the commit
 * and marked published in batches. Each region's processes relay that region's events left
 * unpublished (the publisher crashed or NATS was down). The event id is the Nats-Msg-Id, and
 * consumers key on it, so relaying an event that had in fact been published is harmless.
 */
@Injectable()
export class ResourceEventOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ResourceEventOutbox.name);
  private readonly confirmations = new DebouncedBatch<string>(CONFIRM_FLUSH_MS, (ids) => this.markPublished(ids));
  private readonly inFlight = new Set<Promise<void>>();
  private readonly relay = new PeriodicJob(
    () => this.relayPass(),
    () => RELAY_INTERVAL_MS,
    (error) => this.logger.warn(`resource event relay failed: ${error.message}`),
  );

  constructor(
    @Inject(CONFIG) private readonly config: HeraldConfig,
    private readonly db: DataSource,
    private readonly repository: ResourceEventsRepository,
    private readonly publisher: EventPublisher,
  ) {}

  onApplicationBootstrap(): void {
    this.relay.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.relay.stop();
    await Promise.allSettled([...this.inFlight]);
    await this.confirmations.close();
  }

  /** Records events for the region's stream in the caller's transaction `m`. */
  record(m: EntityManager, region: string, events: HeraldEvent[]): Promise<void> {
    return this.repository.insert(m, region, events);
  }

  /**
   * Publishes recorded events, once their transaction has committed. Never rejects: a failure
   * is logged and left to the relay. Callers may await it to answer once the events are on the
   * stream (as they did before the outbox); shutdown waits for it either way.
   */
  publish(region: string, events: HeraldEvent[]): Promise<void> {
    if (!events.length) return Promise.resolve();
    const work = this.publishAll(region, events)
      .then((acked) => acked.forEach((id) => this.confirmations.add(id)))
      .finally(() => this.inFlight.delete(work));
    this.inFlight.add(work);
    return work;
  }

  /** One relay pass now (tests); answers how many events it published. */
  relayOnce(): Promise<number> {
    return this.relay.runOnce();
  }

  /** Holds the claimed rows locked while publishing them, so that another relay skips them. */
  private relayPass(): Promise<number> {
    const region = this.config.HERALD_REGION;
    return this.db.transaction(async (m) => {
      const due = await this.repository.claimUnpublished(m, region, RELAY_AFTER_MS, RELAY_BATCH);
      if (!due.length) return 0;
      const acked = await this.publishAll(region, due);
      await this.repository.markPublished(acked, m);
      this.logger.log(`relayed ${acked.length} of ${due.length} unpublished resource event(s)`);
      return acked.length;
    });
  }

  /** Answers the ids of the events the stream acknowledged. */
  private async publishAll(region: string, events: HeraldEvent[]): Promise<string[]> {
    const results = await Promise.allSettled(events.map((e) => this.publisher.publish(region, e)));
    return events.flatMap((event, i) => {
      const result = results[i];
      if (result.status === 'fulfilled') return [event.id];
      this.logger.warn(`publish of ${event.type} ${event.id} failed; the relay will retry: ${String(result.reason)}`);
      return [];
    });
  }

  private async markPublished(ids: string[]): Promise<void> {
    try {
      await this.repository.markPublished(ids);
    } catch (error) {
      // The relay publishes them again; consumers dedupe by event id.
      this.logger.warn(`could not mark ${ids.length} resource events published: ${(error as Error).message}`);
    }
  }
}
