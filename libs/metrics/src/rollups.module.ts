import { Module } from '@nestjs/common';
import { DomainsModule } from '@herald/domains';
import { METRICS_CONFIG } from './metrics.config';
import { ReputationGuardrail } from './reputation-guardrail.service';
import { RollupsRepository } from './rollups.repository';
import { RollupsService } from './rollups.service';

/**
 * Counting events into the rollups, and the reputation guardrail it drives. Only the metrics
 * role imports it. Relies on the app importing ConfigModule, DatabaseModule and BusModule (the
 * guardrail's domain.updated events).
 */
@Module({
  imports: [DomainsModule],
  providers: [METRICS_CONFIG.provider, RollupsRepository, ReputationGuardrail, RollupsService],
  exports: [RollupsService, ReputationGuardrail],
})
export class RollupsModule {}
