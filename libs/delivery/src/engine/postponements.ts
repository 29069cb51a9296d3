import type { Logger } from '@nestjs/common';
import { GroupCommit } from '@herald/core';
import type { Dispatcher, EmailStore } from '@herald/messages';
import type { DeliveryMetrics } from './delivery-metrics';

/** Call backs written within this long share one run of the dispatch relay. */
const CALL_BACK_RELAY_MS = 50;

/**
 * Emails a destination with a full queue turned away before their claim. Each one's lease
 * (emails.dispatch_at) is set to about its turn and its command acked; when the destination has
 * room for it, the lease is brought forward to now and the dispatch relay run, so that the
 * reconciler dispatches it again at once. Should the worker die first, the lease runs out and
 * any worker takes the email, as it would a claimed one.
 */
export class Postponements {
  private readonly writes: GroupCommit<{ emailId: string; delayMs: number; called: boolean }, undefined>;
  /** Postponements being written, by email: a call back waits for its email's. */
  private readonly writing = new Map<string, Promise<undefined>>();
  /** A run of the dispatch relay is due for emails called back. */
  private relayDue: NodeJS.Timeout | null = null;

  constructor(
    store: EmailStore,
    private readonly dispatcher: Dispatcher,
    private readonly claimSeconds: number,
    private readonly metrics: DeliveryMetrics,
    private readonly logger: Logger,
  ) {
    this.writes = new GroupCommit({ maxInFlight: 2, maxItems: 500 }, async (items) => {
      await store.postpone(items);
      return items.map(() => undefined);
    });
  }

  /**
   * Until the email's destination calls it back; should the worker die first, until about its
   * turn, at least a claim period (as its claimed emails) and at most three (a long wait costs
   * a few rounds of postponement rather than a long one after a crash).
   */
  async postpone(emailId: string, expectedWaitMs: number): Promise<void> {
    const claimMs = this.claimSeconds * 1000;
    const written = this.writes.submit({ emailId, delayMs: Math.min(Math.max(expectedWaitMs, claimMs), 3 * claimMs), called: false });
    this.writing.set(emailId, written);
    try {
      await written;
    } finally {
      if (this.writing.get(emailId) === written) this.writing.delete(emailId);
    }
    this.metrics.postponed();
  }

  /** Postponed emails a destination has room for now: due at once, the relay run for them now rather than at its next tick. */
  callBack(emailIds: string[]): void {
    void Promise.allSettled(emailIds.map((id) => this.writing.get(id)))
      .then(() => Promise.all(emailIds.map((emailId) => this.writes.submit({ emailId, delayMs: 0, called: true }))))
      .then(() => {
        this.metrics.calledBack(emailIds.length);
        this.relayDue ??= setTimeout(() => {
          this.relayDue = null;
          this.dispatcher.relayOnce().catch((error: Error) => this.logger.warn(`dispatch relay for called-back emails failed: ${error.message}`));
        }, CALL_BACK_RELAY_MS).unref();
      })
      .catch((error: Error) =>
        this.logger.warn(`could not call back ${emailIds.length} postponed emails (they come when their lease runs out): ${error.message}`),
      );
  }

  stop(): void {
    if (this.relayDue) clearTimeout(this.relayDue);
    this.relayDue = null;
  }
}
