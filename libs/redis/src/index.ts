export * from './redis.service';
export * from './redis.module';
export * from './redis-script';
export * from './redis-unavailable.error';
