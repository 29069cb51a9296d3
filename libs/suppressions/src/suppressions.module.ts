import { Module } from '@nestjs/common';
import { ResourceEventsModule } from '@herald/outbox';
import { SUPPRESSION_CACHE_CONFIG, SuppressionCache } from './suppression-cache';
import { SuppressionEvents } from './suppression-events';
import { SuppressionsRepository } from './suppressions.repository';
import { SuppressionsService } from './suppressions.service';

/**
 * The suppression list of each team. Relies on the app importing ConfigModule, DatabaseModule
 * and BusModule (for the suppression.* events, which go through the resource event outbox).
 */
@Module({
  imports: [ResourceEventsModule],
  providers: [SUPPRESSION_CACHE_CONFIG.provider, SuppressionsRepository, SuppressionEvents, SuppressionsService, SuppressionCache],
  exports: [SuppressionsRepository, SuppressionEvents, SuppressionsService, SuppressionCache],
})
export class SuppressionsModule {}
