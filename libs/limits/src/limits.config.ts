import { configSlice, HeraldConfig, SliceOf } from '@herald/config';

/** What the limits services read of the configuration. */
export const LIMITS_CONFIG = configSlice('limits', ['LIMITS_FALLBACK_SHARE', 'FREE_DAILY_LIMIT', 'HERALD_REGION', 'REDIS_REGION']);
export type LimitsConfig = SliceOf<typeof LIMITS_CONFIG>;

/** What `rateLimitFor` reads: the edges (the API's key hook, SMTP submissions) pass it on. */
export type RateLimitConfig = Pick<HeraldConfig, 'RATE_LIMIT_DEFAULT' | 'RATE_LIMIT_PLANS'>;

/** Whether this process's Redis is in another region (REDIS_REGION): its limits then answer without waiting for it when they can (far-limits.ts). */
export const redisIsFar = (config: LimitsConfig): boolean => config.REDIS_REGION !== undefined && config.REDIS_REGION !== config.HERALD_REGION;
