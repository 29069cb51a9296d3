import { Module } from '@nestjs/common';
import { HealthModule } from './health.module';
import { OBSERVABILITY_CONFIG } from './observability.config';
import { OpsServer } from './ops.server';

/**
 * For roles without HTTP. Needs `MetricsModule.forRole()` (or `ObservabilityModule.forRole()`)
 * in the root module.
 */
@Module({ imports: [HealthModule], providers: [OBSERVABILITY_CONFIG.provider, OpsServer], exports: [OpsServer] })
export class OpsServerModule {}
