import { configSlice, SliceOf } from '@herald/config';

/** What @herald/bus reads of the configuration. */
export const BUS_CONFIG = configSlice('bus', [
  'NATS_URL',
  'NATS_NAMESPACE',
  'NATS_REPLICAS',
  'NATS_PLACE_BY_REGION',
  'NATS_REGION_REPLICAS',
  'HERALD_REGION',
  'HERALD_REGIONS',
]);
export type BusConfig = SliceOf<typeof BUS_CONFIG>;
