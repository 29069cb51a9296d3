import { DynamicModule, Module } from '@nestjs/common';
import { HealthModule } from './health.module';
import { LoggingModule, LoggingOptions } from './logging.module';
import { MetricsModule } from './metrics.module';

/**
 * Logging, metrics and the health registry of one role, for its root module. Add
 * `ObservabilityHttpModule` (HTTP roles) or `OpsServerModule` (the others) to expose them.
 */
@Module({})
export class ObservabilityModule {
  static forRole(role: string, options: LoggingOptions = {}): DynamicModule {
    return {
      module: ObservabilityModule,
      imports: [LoggingModule.forRole(role, options), MetricsModule.forRole(role), HealthModule],
    };
  }
}
