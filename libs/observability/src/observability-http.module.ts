import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthModule } from './health.module';
import { MetricsController } from './metrics.controller';

/**
 * `/health/live`, `/health/ready` and `/metrics` on the role's own HTTP server. Needs
 * `MetricsModule.forRole()` (or `ObservabilityModule.forRole()`) in the root module.
 */
@Module({ imports: [HealthModule], controllers: [HealthController, MetricsController] })
export class ObservabilityHttpModule {}
