import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { SendPublisher } from '@herald/bus';
import { DebouncedBatch } from '@herald/core';
import { MetricsService } from '@herald/observability';
import { DispatchRepository } from './dispatch.repository';
import type { NewEmail } from './email-record.types';

const CONFIRM_FLUSH_MS = 100;

/**
 * Publishes send commands to the JetStream stream of each email's region (Nats-Msg-Id = email
 * id) and records, off the request's critical path, which publishes the broker acknowledged, by
 * deleting their rows from the dispatch outbox (email_dispatches).
 * An email whose publish was lost, or whose confirmation never reached Postgres, is found by the
 * reconciler once it is overdue and published again; JetStream's dedupe window and the worker's
 * claim in Postgres keep a republish from sending it twice.
 */
@Injectable()
export class Dispatcher implements OnModuleDestroy {
  private readonly logger = new Logger(Dispatcher.name);
  private readonly confirmations = new DebouncedBatch<string>(CONFIRM_FLUSH_MS, (ids) => this.flush(ids));

  private readonly published;

  constructor(
    private readonly publisher: SendPublisher,
    private readonly dispatches: DispatchRepository,
    metrics: MetricsService,
  ) {
    this.published = metrics.counter(
      'herald_send_commands_published_total',
      'Send commands published to JetStream by the send path, by outcome',
      ['outcome'],
    );
  }

  /**
   * Publishes the send command of each email; never throws: a failed publish is left to the
   * reconciler. An outbox row is confirmed (deleted) once every email it lists was acknowledged.
   * Returns how many were acknowledged.
   */
  async dispatch(emails: Pick<NewEmail, 'id' | 'teamId' | 'region' | 'dispatchId'>[]): Promise<number> {
    const results = await Promise.allSettled(emails.map((e) => this.publisher.publish({ emailId: e.id, teamId: e.teamId, region: e.region })));
    const unconfirmed = new Set<string>();
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') return;
      unconfirmed.add(emails[i].dispatchId);
      this.logger.warn(`publish of email ${emails[i].id} failed, the reconciler will retry: ${String(result.reason)}`);
    });
    for (const dispatchId of new Set(emails.map((e) => e.dispatchId))) {
      if (!unconfirmed.has(dispatchId)) this.confirmations.add(dispatchId);
    }
    const acknowledged = results.filter((r) => r.status === 'fulfilled').length;
    if (acknowledged) this.published.inc({ outcome: 'acknowledged' }, acknowledged);
    if (acknowledged < emails.length) this.published.inc({ outcome: 'failed' }, emails.length - acknowledged);
    return acknowledged;
  }

  private async flush(ids: string[]): Promise<void> {
    try {
      await this.dispatches.confirm(ids);
    } catch (error) {
      // Not fatal: the reconciler republishes these and JetStream dedupes within its window.
      this.logger.warn(`could not record ${ids.length} dispatches: ${(error as Error).message}`);
    }
  }

  onModuleDestroy(): Promise<void> {
    return this.confirmations.close();
  }
}
