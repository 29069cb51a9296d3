export * from './plans';
export * from './rate-limiter.service';
export * from './quota.service';
export * from './limits.module';
