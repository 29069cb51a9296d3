import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher, type HeraldEvent } from '@herald/bus';
import { Outbox } from '../outbox';
import { EVENT_RELAY_AFTER_MS, outboxTuning } from '../outbox.tuning';
import { ResourceEventsRepository, type ChangeTransaction } from './resource-events.repository';
import { OUTBOX_CONFIG, OutboxConfig } from '../outbox.config';

/** An event and the region whose stream it goes to. */
interface RegionEvent {
  region: string;
  event: HeraldEvent;
}

/**
 * The transactional outbox of the events of domains and suppressions (resource_events). A
 * change records its events in its own transaction, so the fact and its event commit together
 * or not at all; they are published after the commit and marked published in batches. Each
 * region's processes relay that region's events left unpublished (the publisher crashed or NATS
 * was down). The event id is the Nats-Msg-Id, and consumers key on it.
 */
@Injectable()
export class ResourceEventOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly outbox: Outbox<RegionEvent>;

  constructor(
    @Inject(OUTBOX_CONFIG.token) config: OutboxConfig,
    private readonly repository: ResourceEventsRepository,
    publisher: EventPublisher,
  ) {
    const region = config.HERALD_REGION;
    this.outbox = new Outbox<RegionEvent>(
      'resource events',
      {
        publish: (e) => publisher.publish(e.region, e.event),
        describe: (e) => e.event,
        confirm: (ids) => repository.markPublished(ids),
      },
      // Each region's processes relay that region's rows.
      [(limit, publish) => repository.relayDue(region, EVENT_RELAY_AFTER_MS, limit, (events) => publish(events.map((event) => ({ region, event }))))],
      outboxTuning(config),
      new Logger(ResourceEventOutbox.name),
    );
  }

  onApplicationBootstrap(): void {
    this.outbox.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.outbox.close();
  }

  /** Records events for the region's stream in the caller's transaction `m`. */
  record(m: ChangeTransaction, region: string, events: HeraldEvent[]): Promise<void> {
    return this.repository.insert(m, region, events);
  }

  /**
   * Publishes recorded events, once their transaction has committed. Never rejects: a failure
   * is logged and left to the relay. Callers may await it to answer once the events are on the
   * stream (as they did before the outbox); shutdown waits for it either way.
   */
  async publish(region: string, events: HeraldEvent[]): Promise<void> {
    await this.outbox.publish(events.map((event) => ({ region, event })));
  }

  /** One relay pass now (tests); answers how many events it published. */
  relayOnce(): Promise<number> {
    return this.outbox.relayOnce();
  }
}
