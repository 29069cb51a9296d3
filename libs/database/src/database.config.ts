import { configSlice, SliceOf } from '@herald/config';

/** What the Postgres connection and the migrations read of the configuration. */
export const DATABASE_CONFIG = configSlice('database', [
  'DATABASE_URL',
  'DATABASE_SCHEMA',
  'DATABASE_POOL_SIZE',
  'HERALD_REGION',
  'HERALD_REGIONS',
  'CONTROL_DATABASE_URL',
  'REGION_DATABASE_URLS',
]);
export type DatabaseConfig = SliceOf<typeof DATABASE_CONFIG>;
