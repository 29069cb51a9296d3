import { Injectable } from '@nestjs/common';
import { GroupCommit } from '@herald/core';
import { EmailEventOutbox, EmailStore, type EngagementHit } from '@herald/messages';

/**
 * Writes opens and clicks as `email.opened`/`email.clicked` events (with their firsts and
 * last_event) through the email record's owner, libs/messages. The messages of the tracking
 * stream that arrive while a transaction runs share the next one (group commit), so a backlog
 * goes by in large transactions; a hit recorded twice is stored once (its id). Once committed,
 * the events are in the outbox: they reach the events stream and webhooks even if the process
 * dies next.
 */
@Injectable()
export class TrackingRecorder {
  private readonly writer: GroupCommit<EngagementHit[], void>;

  constructor(
    private readonly store: EmailStore,
    private readonly outbox: EmailEventOutbox,
  ) {
    this.writer = new GroupCommit({ maxInFlight: 2, maxItems: 64 }, (batches) => this.recordMany(batches));
  }

  /** Resolves once `hits` are committed. */
  record(hits: EngagementHit[]): Promise<void> {
    return this.writer.submit(hits);
  }

  private async recordMany(batches: EngagementHit[][]): Promise<void[]> {
    // A message redelivered while its first delivery is still in this group: each hit once.
    const hits = [...new Map(batches.flat().map((h) => [h.id, h])).values()];
    this.outbox.publish(await this.store.recordEngagement(hits));
    return batches.map(() => undefined);
  }
}
