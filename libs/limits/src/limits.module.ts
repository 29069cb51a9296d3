import { Module } from '@nestjs/common';
import { LIMITS_CONFIG } from './limits.config';
import { QuotaService } from './quota.service';
import { RateLimiter } from './rate-limiter.service';

/** Rate limits and email quotas. Needs the global ConfigModule and RedisModule from the app. */
@Module({ providers: [LIMITS_CONFIG.provider, RateLimiter, QuotaService], exports: [RateLimiter, QuotaService] })
export class LimitsModule {}
