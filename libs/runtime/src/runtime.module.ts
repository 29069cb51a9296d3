import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { BusModule } from '@herald/bus';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { DatabaseModule } from '@herald/database';
import { LoggingOptions, ObservabilityModule } from '@herald/observability';
import { RedisModule } from '@herald/redis';
import { NatsReadiness, PostgresReadiness, RedisReadiness } from './readiness.checks';
import { Dependency, Role, ROLE_NEEDS } from './roles';

const CONNECTIONS: Record<Dependency, { module: Type; readiness: Provider }> = {
  postgres: { module: DatabaseModule, readiness: PostgresReadiness },
  redis: { module: RedisModule, readiness: RedisReadiness },
  nats: { module: BusModule, readiness: NatsReadiness },
};

/**
 * What a role runs on: its validated config, JSON logs, metrics and health, and the connections
 * it declares in ROLE_NEEDS, each with its readiness check; no others. A role that reaches for a
 * connection it did not declare fails at boot (Nest cannot resolve the provider).
 */
@Module({})
export class RuntimeModule {
  static forRole(role: Role, config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    const needs = ROLE_NEEDS[role].map((dependency) => CONNECTIONS[dependency]);
    return {
      module: RuntimeModule,
      imports: [ConfigModule.forRoot(config), ObservabilityModule.forRole(role, logging), ...needs.map((n) => n.module)],
      providers: needs.map((n) => n.readiness),
    };
  }
}
