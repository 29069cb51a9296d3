import { Global, Module } from '@nestjs/common';
import { REDIS_CONFIG } from './redis.config';
import { RedisService } from './redis.service';

@Global()
@Module({ providers: [REDIS_CONFIG.provider, RedisService], exports: [RedisService] })
export class RedisModule {}
