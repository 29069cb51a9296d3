import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher, OutboxPublisher, RELAY_AFTER_MS, RELAY_BATCH, type HeraldEvent } from '@herald/bus';
import { CONFIG, HeraldConfig } from '@herald/config';
import { isoTimestamp } from '@herald/core';
import { MetricsService } from '@herald/observability';
import { EmailEventsRepository } from './email-events.repository';
import type { EmailEventRecord } from './email-events';

export const toHeraldEvent = (e: EmailEventRecord): HeraldEvent => ({
  id: e.id,
  type: e.type,
  created_at: isoTimestamp(e.createdAt),
  team_id: e.teamId,
  data: e.data,
});

/**
 * Puts recorded email events on their region's events stream. Events are written to
 * email_events in the transaction that records the fact (the outbox), published after the
 * commit, and marked published in batches; the relay publishes whatever stayed unpublished (the
 * publisher crashed or NATS was down). The event id is the Nats-Msg-Id, and every consumer keys
 * on it, so a relayed event that had in fact been published is harmless.
 */
@Injectable()
export class EmailEventOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly outbox: OutboxPublisher<EmailEventRecord>;

  constructor(@Inject(CONFIG) config: HeraldConfig, repository: EmailEventsRepository, publisher: EventPublisher, metrics: MetricsService) {
    const published = metrics.counter('herald_email_events_published_total', 'Email events put on the events stream, by type and path', [
      'type',
      'path',
    ]);
    const logger = new Logger(EmailEventOutbox.name);
    this.outbox = new OutboxPublisher<EmailEventRecord>(
      {
        publish: (e) => publisher.publish(e.region, toHeraldEvent(e)),
        describe: (e) => e,
        markPublished: (ids) => repository.markPublished(ids),
        relay: async (publishAll) => {
          const due = await repository.unpublished(config.HERALD_REGION, RELAY_AFTER_MS, RELAY_BATCH);
          if (!due.length) return 0;
          const acked = await publishAll(due);
          await repository.markPublished(acked);
          logger.log(`relayed ${acked.length} of ${due.length} unpublished email event(s)`);
          return acked.length;
        },
      },
      logger,
      (e, path) => published.inc({ type: e.type, path }),
    );
  }

  onApplicationBootstrap(): void {
    this.outbox.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.outbox.close();
  }

  /** Publishes recorded events in the background; a failure is left to the relay. */
  publish(events: EmailEventRecord[]): void {
    void this.outbox.publish(events);
  }
}
