import { Module } from '@nestjs/common';
import { HealthModule } from './health.module';
import { OPS_CONFIG } from './ops.config';
import { OpsServer } from './ops.server';

/**
 * For roles without HTTP. Needs `MetricsModule.forRole()` (or `ObservabilityModule.forRole()`)
 * in the root module.
 */
@Module({ imports: [HealthModule], providers: [OPS_CONFIG.provider, OpsServer], exports: [OpsServer] })
export class OpsServerModule {}
