import { Injectable, OnModuleInit } from '@nestjs/common';
import { NatsService } from '@herald/bus';
import { PostgresHealth } from '@herald/database';
import { HealthRegistry } from '@herald/observability';
import { RedisService } from '@herald/redis';

/** Not ready without Postgres: nothing a role does works without it. */
@Injectable()
export class PostgresReadiness implements OnModuleInit {
  constructor(
    private readonly health: HealthRegistry,
    private readonly postgres: PostgresHealth,
  ) {}

  onModuleInit(): void {
    this.health.register('postgres', () => this.postgres.ping());
  }
}

/** Every Redis use has a fallback (README "When Redis is unreachable"): degraded, still ready. */
@Injectable()
export class RedisReadiness implements OnModuleInit {
  constructor(
    private readonly health: HealthRegistry,
    private readonly redis: RedisService,
  ) {}

  onModuleInit(): void {
    this.health.register('redis', () => this.redis.ping(), { critical: false });
  }
}

/** Not ready without NATS: sends, events and consumers all go through it. */
@Injectable()
export class NatsReadiness implements OnModuleInit {
  constructor(
    private readonly health: HealthRegistry,
    private readonly nats: NatsService,
  ) {}

  onModuleInit(): void {
    this.health.register('nats', async () => this.nats.isReady());
  }
}
