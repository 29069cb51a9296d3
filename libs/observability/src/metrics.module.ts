import { DynamicModule, Global, Module } from '@nestjs/common';
import { createMetricsRegistry, METRICS_REGISTRY } from './metrics.registry';
import { MetricsService } from './metrics.service';
import { OBSERVABILITY_CONFIG, ObservabilityConfig } from './observability.config';

/** Global so every context module can define its metrics on the one registry the role exposes. */
@Global()
@Module({})
export class MetricsModule {
  static forRole(role: string): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        OBSERVABILITY_CONFIG.provider,
        {
          provide: METRICS_REGISTRY,
          inject: [OBSERVABILITY_CONFIG.token],
          useFactory: (config: ObservabilityConfig) => createMetricsRegistry(role, config.HERALD_REGION),
        },
        MetricsService,
      ],
      exports: [METRICS_REGISTRY, MetricsService],
    };
  }
}
