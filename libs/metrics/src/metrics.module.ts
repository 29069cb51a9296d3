import { Module } from '@nestjs/common';
import { DomainsModule } from '@herald/domains';
import { METRICS_CONFIG } from './metrics.config';
import { RollupsRepository } from './rollups.repository';
import { StatsService } from './stats.service';

/** Reading the rollups (GET /stats). Relies on the app importing ConfigModule and DatabaseModule. */
@Module({
  imports: [DomainsModule],
  providers: [METRICS_CONFIG.provider, RollupsRepository, StatsService],
  exports: [StatsService],
})
export class MetricsModule {}
