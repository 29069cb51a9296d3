import { configSlice, SliceOf } from '@herald/config';

/** What @herald/redis reads of the configuration. */
export const REDIS_CONFIG = configSlice('redis', ['REDIS_URL', 'REDIS_PREFIX', 'REDIS_COMMAND_TIMEOUT_MS']);
export type RedisConfig = SliceOf<typeof REDIS_CONFIG>;
