import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { EventPublisher, type HeraldEvent } from '../event-publisher';
import { OutboxPublisher, RELAY_AFTER_MS, RELAY_BATCH } from '../outbox-publisher';
import { ResourceEventsRepository } from './resource-events.repository';

/** An event and the region whose stream it goes to. */
interface RegionEvent {
  region: string;
  event: HeraldEvent;
}

/**
 * The transactional outbox of the events of domains and suppressions (the email events have
 * their own table, in the delivery engine; both publish through OutboxPublisher). A change
 * records its events in its own transaction, so the fact and its event commit together or not
 * at all; they are published after the commit and marked published in batches. Each region's processes relay that region's events left
 * unpublished (the publisher crashed or NATS was down). The event id is the Nats-Msg-Id, and
 * consumers key on it, so relaying an event that had in fact been published is harmless.
 */
@Injectable()
export class ResourceEventOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly region: string;
  private readonly outbox: OutboxPublisher<RegionEvent>;

  constructor(
    @Inject(CONFIG) config: HeraldConfig,
    private readonly db: DataSource,
    private readonly repository: ResourceEventsRepository,
    publisher: EventPublisher,
  ) {
    this.region = config.HERALD_REGION;
    const logger = new Logger(ResourceEventOutbox.name);
    this.outbox = new OutboxPublisher<RegionEvent>(
      {
        publish: ({ region, event }) => publisher.publish(region, event),
        describe: ({ event }) => event,
        markPublished: (ids) => repository.markPublished(ids),
        relay: (publishAll) => this.relayPass(publishAll, logger),
      },
      logger,
    );
  }

  onApplicationBootstrap(): void {
    this.outbox.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.outbox.close();
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
    return this.outbox.publish(events.map((event) => ({ region, event })));
  }

  /** One relay pass now (tests); answers how many events it published. */
  relayOnce(): Promise<number> {
    return this.outbox.relayOnce();
  }

  /** Holds the claimed rows locked while publishing them, so that another relay skips them. */
  private relayPass(publishAll: (events: RegionEvent[]) => Promise<string[]>, logger: Logger): Promise<number> {
    // Each region's processes relay that region's rows.
    return this.db.transaction(async (m) => {
      const due = await this.repository.claimUnpublished(m, this.region, RELAY_AFTER_MS, RELAY_BATCH);
      if (!due.length) return 0;
      const acked = await publishAll(due.map((event) => ({ region: this.region, event })));
      await this.repository.markPublished(acked, m);
      logger.log(`relayed ${acked.length} of ${due.length} unpublished resource event(s)`);
      return acked.length;
    });
  }
}
