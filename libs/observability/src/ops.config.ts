import { configSlice, SliceOf } from '@herald/config';

/** What the ops server reads of the configuration. */
export const OPS_CONFIG = configSlice('ops', ['OPS_PORT']);
export type OpsConfig = SliceOf<typeof OPS_CONFIG>;
