import { configSlice, SliceOf } from '@herald/config';

/**
 * What @herald/metrics reads of the configuration: the region whose events it counts, the regions
 * GET /stats accepts, and the reputation guardrail's limits.
 */
export const METRICS_CONFIG = configSlice('metrics', [
  'HERALD_REGION',
  'HERALD_REGIONS',
  'METRICS_GUARDRAIL_BOUNCE_RATE',
  'METRICS_GUARDRAIL_COMPLAINT_RATE',
  'METRICS_GUARDRAIL_MIN_SENT',
]);
export type MetricsConfig = SliceOf<typeof METRICS_CONFIG>;
