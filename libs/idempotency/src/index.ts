export * from './idempotency.types';
export * from './idempotency-key.validator';
export * from './idempotency-records.repository';
export * from './idempotency.service';
export * from './idempotency.module';
export * from './idempotency-purger.service';
