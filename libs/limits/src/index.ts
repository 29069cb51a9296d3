export * from './plans';
export type { RateLimitConfig } from './limits.config';
export * from './rate-limiter.service';
export * from './quota.service';
export * from './limits.module';
