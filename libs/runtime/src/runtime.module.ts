import { DynamicModule, Module } from '@nestjs/common';
import { BusModule } from '@herald/bus';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { DatabaseModule } from '@herald/database';
import { LoggingOptions, ObservabilityModule } from '@herald/observability';
import { RedisModule } from '@herald/redis';
import { ReadinessChecks } from './readiness.checks';

export type Role = 'api' | 'smtp' | 'worker' | 'webhooks';

/**
 * What every role runs on: its validated config, JSON logs, metrics and health, Postgres,
 * Redis and NATS, with readiness checks for the three.
 */
@Module({})
export class RuntimeModule {
  static forRole(role: Role, config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: RuntimeModule,
      imports: [
        ConfigModule.forRoot(config),
        ObservabilityModule.forRole(role, logging),
        DatabaseModule,
        RedisModule,
        BusModule,
      ],
      providers: [ReadinessChecks],
    };
  }
}
