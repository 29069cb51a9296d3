import { Module } from '@nestjs/common';
import { HealthModule } from './health.module';
import { OpsServer } from './ops.server';

/**
 * For roles without HTTP. Needs `MetricsModule.forRole()` (or `ObservabilityModule.forRole()`)
 * in the root module.
 */
@Module({ imports: [HealthModule], providers: [OpsServer], exports: [OpsServer] })
export class OpsServerModule {}
