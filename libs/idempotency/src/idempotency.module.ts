import { Module } from '@nestjs/common';
import { IdempotencyRecords } from './idempotency-records.repository';
import { IDEMPOTENCY_CONFIG } from './idempotency.config';
import { IdempotencyService } from './idempotency.service';
import { IdempotencyPurger } from './idempotency-purger.service';

/**
 * The idempotency registry. Relies on the app importing the global ConfigModule and RedisModule
 * and DatabaseModule (which provides TypeORM's DataSource).
 */
@Module({
  providers: [IDEMPOTENCY_CONFIG.provider, IdempotencyRecords, IdempotencyService],
  exports: [IdempotencyService, IdempotencyRecords],
})
export class IdempotencyModule {}

/** The periodic purge of expired Postgres records, for the role that runs it (the API). */
@Module({ imports: [IdempotencyModule], providers: [IDEMPOTENCY_CONFIG.provider, IdempotencyPurger] })
export class IdempotencyPurgerModule {}
