import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher, EVENTS_PER_MESSAGE, type HeraldEvent } from '@herald/bus';
import { isoTimestamp } from '@herald/core';
import { MetricsService } from '@herald/observability';
import { EVENT_RELAY_AFTER_MS, Outbox, outboxTuning } from '@herald/outbox';
import type { EmailEventRecord } from './email-events';
import { EmailEventsRepository } from './email-events.repository';
import { MESSAGES_CONFIG, MessagesConfig } from './messages.config';

export const toHeraldEvent = (e: EmailEventRecord): HeraldEvent => ({
  id: e.id,
  type: e.type,
  created_at: isoTimestamp(e.createdAt),
  team_id: e.teamId,
  data: e.data,
});

/** An event's outbox row, `<region> <id>`, as EmailEventOutbox's confirmations carry it. */
function eventRow(row: string): { region: string; id: string } {
  const [region, id] = row.split(' ');
  return { region, id };
}

/**
 * Puts recorded email events on their region's events stream. Events are written to
 * email_events in the transaction that records the fact (the outbox), published after the
 * commit, and marked published in batches; the relay publishes whatever stayed unpublished (the
 * publisher crashed or NATS was down). The event id is the Nats-Msg-Id, and every consumer keys
 * on it, so a relayed event that had in fact been published is harmless.
 */
@Injectable()
export class EmailEventOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly outbox: Outbox<EmailEventRecord>;
  private readonly published;

  constructor(
    @Inject(MESSAGES_CONFIG.token) config: MessagesConfig,
    repository: EmailEventsRepository,
    private readonly publisher: EventPublisher,
    metrics: MetricsService,
  ) {
    this.published = metrics.counter('herald_email_events_published_total', 'Email events put on the events stream, by type and path', [
      'type',
      'path',
    ]);
    this.outbox = new Outbox<EmailEventRecord>(
      'email events',
      {
        publish: (e) => publisher.publish(e.region, toHeraldEvent(e)),
        describe: (e) => e,
        // An event is marked in its region's email plane: its row names both.
        rowOf: (e) => `${e.region} ${e.id}`,
        confirm: (rows) => repository.markPublished(rows.map(eventRow)),
      },
      [(limit, publish) => repository.relayDue(config.HERALD_REGION, EVENT_RELAY_AFTER_MS, limit, publish)],
      outboxTuning(config),
      new Logger(EmailEventOutbox.name),
      (e, path) => this.published.inc({ type: e.type, path }),
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

  /**
   * Publishes events recorded as published already (EmailStore.recordEngagementPublished): their
   * fact's own stream redelivers it until they are on the events stream, so there is no row to
   * confirm nor relay. Several of one type and region share a message. Rejects unless every
   * message was acknowledged.
   */
  async publishRecorded(events: EmailEventRecord[]): Promise<void> {
    const groups = new Map<string, EmailEventRecord[]>();
    for (const e of events) {
      const key = `${e.region} ${e.type}`;
      const group = groups.get(key);
      if (group) group.push(e);
      else groups.set(key, [e]);
    }
    const messages: EmailEventRecord[][] = [];
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += EVENTS_PER_MESSAGE) messages.push(group.slice(i, i + EVENTS_PER_MESSAGE));
    }
    await Promise.all(messages.map((m) => this.publisher.publishMany(m[0]!.region, m.map(toHeraldEvent))));
    for (const e of events) this.published.inc({ type: e.type, path: 'direct' });
  }

  /** One relay pass now (tests); answers how many events it published. */
  relayOnce(): Promise<number> {
    return this.outbox.relayOnce();
  }
}
