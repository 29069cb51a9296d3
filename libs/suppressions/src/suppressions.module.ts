import { Module } from '@nestjs/common';
import { ResourceEventsModule } from '@herald/outbox';
import { SuppressionEvents } from './suppression-events';
import { SuppressionsRepository } from './suppressions.repository';
import { SuppressionsService } from './suppressions.service';

/**
 * The suppression list of each team. Relies on the app importing ConfigModule, DatabaseModule
 * and BusModule (for the suppression.* events, which go through the resource event outbox).
 */
@Module({
  imports: [ResourceEventsModule],
  providers: [SuppressionsRepository, SuppressionEvents, SuppressionsService],
  exports: [SuppressionsRepository, SuppressionEvents, SuppressionsService],
})
export class SuppressionsModule {}
