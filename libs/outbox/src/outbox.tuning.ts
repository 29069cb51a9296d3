import type { HeraldConfig } from '@herald/config';

/** How an outbox is published and relayed. Every figure of the three outboxes is set here. */
export interface OutboxTuning {
  /** Rows the relay locks and publishes per pass; a full pass is followed at once by another. */
  relayBatch: number;
  /** Pause between relay passes. */
  relayIntervalMs: number;
  /** Acknowledged publishes are recorded (rows marked published or deleted) in batches this often. */
  confirmFlushMs: number;
}

/**
 * An event row unpublished for this long lost its publisher (a crash between commit and
 * publish, NATS down): the relay publishes it. Dispatch rows carry their own due time instead
 * (DISPATCH_GRACE_SECONDS after acceptance, or the scheduled time), set when they are written.
 */
export const EVENT_RELAY_AFTER_MS = 10_000;

/**
 * The tuning of every outbox: the dispatch outbox (email_dispatches, and the workers' leases),
 * the email events (email_events) and the resource events (resource_events). One relay cadence
 * and batch for all three, from RECONCILE_INTERVAL_MS and RECONCILE_BATCH_SIZE.
 */
export function outboxTuning(config: Pick<HeraldConfig, 'RECONCILE_INTERVAL_MS' | 'RECONCILE_BATCH_SIZE'>): OutboxTuning {
  return { relayBatch: config.RECONCILE_BATCH_SIZE, relayIntervalMs: config.RECONCILE_INTERVAL_MS, confirmFlushMs: 100 };
}
