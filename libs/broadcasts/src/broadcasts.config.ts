import { configSlice, SliceOf } from '@herald/config';

/** What @herald/broadcasts reads: the unsubscribe keys (the tracking keys), the public URL its links use, the fan-out's pace. */
export const BROADCASTS_CONFIG = configSlice('broadcasts', [
  'TRACKING_KEYS',
  'DKIM_ENCRYPTION_KEY',
  'PUBLIC_API_URL',
  'MAX_SCHEDULE_DAYS',
  'HERALD_REGION',
  'BROADCAST_CHUNK_SIZE',
  'BROADCAST_LEASE_SECONDS',
]);
export type BroadcastsConfig = SliceOf<typeof BROADCASTS_CONFIG>;
