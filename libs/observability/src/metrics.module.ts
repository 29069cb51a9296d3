import { DynamicModule, Global, Module } from '@nestjs/common';
import { CONFIG, HeraldConfig } from '@herald/config';
import { createMetricsRegistry, METRICS_REGISTRY } from './metrics.registry';
import { MetricsService } from './metrics.service';

/** Global so every context module can define its metrics on the one registry the role exposes. */
@Global()
@Module({})
export class MetricsModule {
  static forRole(role: string): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        {
          provide: METRICS_REGISTRY,
          inject: [CONFIG],
          useFactory: (config: HeraldConfig) => createMetricsRegistry(role, config.HERALD_REGION),
        },
        MetricsService,
      ],
      exports: [METRICS_REGISTRY, MetricsService],
    };
  }
}
