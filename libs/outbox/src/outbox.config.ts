import { configSlice, SliceOf } from '@herald/config';

/** What the resource-events outbox reads of the configuration (its tuning: outbox.tuning.ts). */
export const OUTBOX_CONFIG = configSlice('outbox', ['HERALD_REGION', 'RECONCILE_INTERVAL_MS', 'RECONCILE_BATCH_SIZE']);
export type OutboxConfig = SliceOf<typeof OUTBOX_CONFIG>;
