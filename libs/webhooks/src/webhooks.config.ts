import { configSlice, SliceOf } from '@herald/config';

/** What the webhooks API and dispatcher read of the configuration. */
export const WEBHOOKS_CONFIG = configSlice('webhooks', [
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_ATTEMPT_TIMEOUT_MS',
  'WEBHOOK_CONCURRENCY',
  'WEBHOOK_CONCURRENCY_PER_ENDPOINT',
  'WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT',
  'WEBHOOK_ALLOW_HTTP',
  'WEBHOOK_ALLOWED_ADDRESSES',
  'WEBHOOK_DISABLE_AFTER_HOURS',
]);
export type WebhooksConfig = SliceOf<typeof WEBHOOKS_CONFIG>;
