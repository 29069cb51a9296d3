import { Module } from '@nestjs/common';
import { SuppressionEvents } from './suppression-events';
import { SuppressionsRepository } from './suppressions.repository';
import { SuppressionsService } from './suppressions.service';

/**
 * The suppression list of each team. Relies on the app importing ConfigModule, DatabaseModule
 * and BusModule (for the suppression.* events).
 */
@Module({
  providers: [SuppressionsRepository, SuppressionEvents, SuppressionsService],
  exports: [SuppressionsRepository, SuppressionEvents, SuppressionsService],
})
export class SuppressionsModule {}
