import { configSlice, SliceOf } from '@herald/config';

/** What logging, metrics and the ops server read of the configuration. */
export const OBSERVABILITY_CONFIG = configSlice('observability', ['LOG_LEVEL', 'HERALD_REGION', 'OPS_PORT']);
export type ObservabilityConfig = SliceOf<typeof OBSERVABILITY_CONFIG>;
