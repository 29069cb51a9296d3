import { Inject, Injectable } from '@nestjs/common';
import { GroupCommit } from '@herald/core';
import { EmailEventOutbox, EmailStore, type EngagementHit } from '@herald/messages';
import { RecorderPace } from './recorder-pace';
import { TRACKING_CONFIG, TrackingConfig } from './tracking.config';

/** Messages (each up to 128 hits) in one transaction at most. */
const MAX_MESSAGES = 256;
/** Hits recorded directly (NATS down) in one transaction at most. */
const MAX_DIRECT_HITS = 1024;
/**
 * The pause after each transaction: the hits are safe on the stream already, so waiting a little
 * costs nothing but latency, and lets the next transaction take everything that arrived meanwhile.
 * Under load that makes few large transactions (a statement's cost is mostly per statement, not per
 * row) instead of many small ones competing with the redirects for the CPU.
 */
export const RECORD_LINGER_MS = 50;
/**
 * How often the recorder looks again while the process is saturated (RecorderPace): it records
 * nothing until the saturation ends or TRACKING_RECORD_DEFER_MS has passed since it last caught
 * up, so a message waits at most that long plus a transaction, within the stream's 30 s ack wait.
 */
const BUSY_LINGER_MS = 1000;

/**
 * Writes opens and clicks as `email.opened`/`email.clicked` events (with their firsts and
 * last_event) through the email record's owner, libs/messages. One transaction at a time:
 * the messages of the tracking stream that arrive while one runs (and lingers, RECORD_LINGER_MS)
 * share the next one, so a burst or a backlog goes by in large transactions; a hit recorded
 * twice is stored once (its id). While the process is saturated answering hits, it defers (see
 * RecorderPace and TRACKING_RECORD_DEFER_MS).
 *
 * The tracking stream is the events' outbox: a message is acked only once its events are
 * committed and on the events stream, published right after the commit in messages of up to 128
 * events (one stored message and one ack for many, not one each), so the rows are stored as
 * published and never touched again. A process that dies in between leaves the message
 * unacked: it comes back, records nothing twice, and publishes the stored events again (the
 * consumers key on event ids). Hits recorded directly, when the stream could not take them, go
 * through the email events' outbox instead (rows published after the commit, relayed if not).
 */
@Injectable()
export class TrackingRecorder {
  private readonly writer: GroupCommit<EngagementHit[], void>;
  private readonly direct: GroupCommit<EngagementHit, void>;
  private readonly pace: RecorderPace;

  constructor(
    @Inject(TRACKING_CONFIG.token) config: TrackingConfig,
    private readonly store: EmailStore,
    private readonly outbox: EmailEventOutbox,
  ) {
    this.pace = new RecorderPace({ lingerMs: RECORD_LINGER_MS, busyLingerMs: BUSY_LINGER_MS, maxDeferMs: config.TRACKING_RECORD_DEFER_MS });
    this.writer = new GroupCommit({ maxInFlight: 1, maxItems: MAX_MESSAGES }, (batches) =>
      this.recordMany(batches).finally(() => this.pace.wait(() => this.writer.waiting > 0)),
    );
    this.direct = new GroupCommit({ maxInFlight: 1, maxItems: MAX_DIRECT_HITS }, (hits) => this.recordThroughOutbox(hits));
  }

  /** The hits of a tracking stream message: resolves once their events are committed and on the events stream. */
  record(hits: EngagementHit[]): Promise<void> {
    return this.writer.submit(hits);
  }

  /** A hit the stream did not take: resolves once its event is committed (the outbox publishes it). */
  recordDirectly(hit: EngagementHit): Promise<void> {
    return this.direct.submit(hit);
  }

  private async recordMany(batches: EngagementHit[][]): Promise<void[]> {
    // A message redelivered while its first delivery is still in this group: each hit once.
    const hits = [...new Map(batches.flat().map((h) => [h.id, h])).values()];
    await this.outbox.publishRecorded(await this.store.recordEngagementPublished(hits));
    return batches.map(() => undefined);
  }

  private async recordThroughOutbox(hits: EngagementHit[]): Promise<void[]> {
    this.outbox.publish(await this.store.recordEngagement(hits));
    return hits.map(() => undefined);
  }
}
