import { configSlice, SliceOf } from '@herald/config';

/** What the tracking endpoints read of the configuration (the worker's link signing reads DELIVERY_CONFIG). */
export const TRACKING_CONFIG = configSlice('tracking', [
  'TRACKING_KEYS',
  'DKIM_ENCRYPTION_KEY',
  'TRACKING_SCANNER_WINDOW_SECONDS',
  'TRACKING_APPLE_PROXY_RANGES',
  'TRACKING_RECORD_WAIT_MS',
  'TRACKING_RECORD_DEFER_MS',
  'NATS_NAMESPACE',
  'HERALD_REGION',
]);
export type TrackingConfig = SliceOf<typeof TRACKING_CONFIG>;
