import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NatsService } from '@herald/bus';
import { HealthRegistry } from '@herald/observability';
import { RedisService } from '@herald/redis';

/** A role is ready when it can reach the three services every role depends on. */
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
    this.health.register('redis', () => this.redis.ping());
    this.health.register('nats', async () => this.nats.isReady());
  }
}
