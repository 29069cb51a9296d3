import { configSlice, SliceOf } from '@herald/config';

/** What @herald/idempotency reads of the configuration. */
export const IDEMPOTENCY_CONFIG = configSlice('idempotency', [
  'IDEMPOTENCY_TTL_SECONDS',
  'IDEMPOTENCY_IN_FLIGHT_SECONDS',
  'HERALD_REGION',
  'REDIS_REGION',
]);
export type IdempotencyConfig = SliceOf<typeof IDEMPOTENCY_CONFIG>;
