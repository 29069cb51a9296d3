import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthModule } from './health.module';

/**
 * `/health/live` and `/health/ready` on the role's own HTTP server (its load balancer probes
 * them there). `/metrics` is not served here: the API's port is public, and its metrics (routes,
 * teams' volumes, dependencies' health) are for operators, so they are scraped from the ops
 * server (`OpsServerModule`, OPS_PORT) like every other role's. Needs `MetricsModule.forRole()`
 * (or `ObservabilityModule.forRole()`) in the root module.
 */
@Module({ imports: [HealthModule], controllers: [HealthController] })
export class ObservabilityHttpModule {}
