import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { IdempotencyRecords } from './idempotency-records.repository';
import { IDEMPOTENCY_CONFIG, type IdempotencyConfig } from './idempotency.config';

const PURGE_INTERVAL_MS = 15 * 60_000;

/**
 * Deletes Postgres idempotency records older than the retention, every 15 minutes. Expired rows
 * are already ignored by reads and overwritten by inserts; this only keeps the table small.
 */
@Injectable()
export class IdempotencyPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyPurger.name);
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(IDEMPOTENCY_CONFIG.token) private readonly config: IdempotencyConfig,
    private readonly records: IdempotencyRecords,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async purge(now = new Date()): Promise<number> {
    try {
      const deleted = await this.records.purgeExpired(new Date(now.getTime() - this.config.IDEMPOTENCY_TTL_SECONDS * 1000));
      if (deleted) this.logger.log(`purged ${deleted} expired idempotency record(s)`);
      return deleted;
    } catch (error) {
      this.logger.warn(`idempotency purge failed: ${(error as Error).message}`);
      return 0;
    }
  }
}
