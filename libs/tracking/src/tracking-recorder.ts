import { Injectable } from '@nestjs/common';
import { GroupCommit } from '@herald/core';
import { EmailEventOutbox, EmailStore, type EngagementHit } from '@herald/messages';

/** Messages (each up to 128 hits) in one transaction at most. */
const MAX_MESSAGES = 256;
/**
 * The pause after each transaction: the hits are safe on the stream already, so waiting a little
 * costs nothing but latency, and lets the next transaction take everything that arrived meanwhile.
 * Under load that makes few large transactions (a statement's cost is mostly per statement, not per
 * row) instead of many small ones competing with the redirects for the CPU.
 */
export const RECORD_LINGER_MS = 50;

/**
 * Writes opens and clicks as `email.opened`/`email.clicked` events (with their firsts and
 * last_event) through the email record's owner, libs/messages. One transaction at a time:
 * the messages of the tracking stream that arrive while one runs (and lingers, RECORD_LINGER_MS)
 * share the next one, so a burst or a backlog goes by in large transactions; a hit recorded
 * twice is stored once (its id). Once committed, the events are in the outbox: they reach the
 * events stream and webhooks even if the process dies next.
 */
@Injectable()
export class TrackingRecorder {
  private readonly writer: GroupCommit<EngagementHit[], void>;

  constructor(
    private readonly store: EmailStore,
    private readonly outbox: EmailEventOutbox,
  ) {
    this.writer = new GroupCommit({ maxInFlight: 1, maxItems: MAX_MESSAGES }, (batches) =>
      this.recordMany(batches).finally(() => new Promise((resolve) => setTimeout(resolve, RECORD_LINGER_MS))),
    );
  }

  /** Resolves once `hits` are committed (and the transaction's linger is over). */
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
