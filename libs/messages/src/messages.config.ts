import { configSlice, SliceOf } from '@herald/config';

/** What the email record's owner reads of the configuration (the outboxes' tuning among it). */
export const MESSAGES_CONFIG = configSlice('messages', [
  'HERALD_REGION',
  'DISPATCH_GRACE_SECONDS',
  'DELIVERY_CLAIM_SECONDS',
  'RECONCILE_INTERVAL_MS',
  'RECONCILE_BATCH_SIZE',
]);
export type MessagesConfig = SliceOf<typeof MESSAGES_CONFIG>;
