export * from './redis.service';
export * from './redis.module';
