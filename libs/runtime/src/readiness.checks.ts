import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NatsService } from '@herald/bus';
import { HealthRegistry } from '@herald/observability';
import { RedisService } from '@herald/redis';

/** A role is ready when it can reach Postgres and NATS; without Redis it is ready but degraded. */
@Injectable()
export class ReadinessChecks implements OnModuleInit {
  constructor(
    private readonly health: HealthRegistry,
    private readonly db: DataSource,
    private readonly redis: RedisService,
    private readonly nats: NatsService,
  ) {}

  onModuleInit(): void {
    this.health.register('postgres', async () => {
      await this.db.query('SELECT 1');
    });
    // Every Redis use has a fallback (README "When Redis is unreachable"): degraded, still ready.
    this.health.register('redis', () => this.redis.ping(), { critical: false });
    this.health.register('nats', async () => this.nats.isReady());
  }
}
