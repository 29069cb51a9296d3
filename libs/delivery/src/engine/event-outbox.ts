import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPublisher, type HeraldEvent } from '@herald/bus';
import { CONFIG, HeraldConfig } from '@herald/config';
import { DebouncedBatch, isoTimestamp, PeriodicJob } from '@herald/core';
import { MetricsService } from '@herald/observability';
import { EmailEventsRepository } from './email-events.repository';
import type { EmailEventRecord } from './email-events';

const CONFIRM_FLUSH_MS = 100;
/** An event unpublished for this long lost its publisher (a crash between commit and publish). */
const RELAY_AFTER_MS = 10_000;
const RELAY_INTERVAL_MS = 5_000;
const RELAY_BATCH = 500;

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
export class EventOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EventOutbox.name);
  private readonly confirmations = new DebouncedBatch<string>(CONFIRM_FLUSH_MS, (ids) => this.markPublished(ids));
  private readonly inFlight = new Set<Promise<void>>();
  private readonly relay = new PeriodicJob(
    () => this.relayPass(),
    () => RELAY_INTERVAL_MS,
    (error) => this.logger.warn(`event relay failed: ${error.message}`),
  );
  private readonly published;

  constructor(
    @Inject(CONFIG) private readonly config: HeraldConfig,
    private readonly repository: EmailEventsRepository,
    private readonly publisher: EventPublisher,
    metrics: MetricsService,
  ) {
    this.published = metrics.counter('herald_email_events_published_total', 'Email events put on the events stream, by type and path', [
      'type',
      'path',
    ]);
  }

  onApplicationBootstrap(): void {
    this.relay.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.relay.stop();
    await Promise.allSettled([...this.inFlight]);
    await this.confirmations.close();
  }

  /** Publishes recorded events in the background; a failure is left to the relay. */
  publish(events: EmailEventRecord[]): void {
    if (!events.length) return;
    const work = this.publishAll(events, 'direct').finally(() => this.inFlight.delete(work));
    this.inFlight.add(work);
  }

  private async relayPass(): Promise<number> {
    const due = await this.repository.unpublished(this.config.HERALD_REGION, RELAY_AFTER_MS, RELAY_BATCH);
    if (!due.length) return 0;
    await this.publishAll(due, 'relay');
    this.logger.log(`relayed ${due.length} unpublished email event(s)`);
    return due.length;
  }

  private async publishAll(events: EmailEventRecord[], path: 'direct' | 'relay'): Promise<void> {
    const results = await Promise.allSettled(events.map((e) => this.publisher.publish(e.region, toHeraldEvent(e))));
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        this.published.inc({ type: events[i].type, path });
        this.confirmations.add(events[i].id);
      } else {
        this.logger.warn(`publish of ${events[i].type} ${events[i].id} failed; the relay will retry: ${String(result.reason)}`);
      }
    });
  }

  private async markPublished(ids: string[]): Promise<void> {
    try {
      await this.repository.markPublished(ids);
    } catch (error) {
      // The relay publishes them again; consumers dedupe by event id.
      this.logger.warn(`could not mark ${ids.length} events published: ${(error as Error).message}`);
    }
  }
}
