import { Module } from '@nestjs/common';
import { DomainsModule } from '@herald/domains';
import { MessagesModule } from '@herald/messages';
import { SuppressionsModule } from '@herald/suppressions';
import { DmarcLookup } from './dmarc-lookup';
import { InsightsRepository } from './insights.repository';
import { InsightsService } from './insights.service';

/**
 * The insights context: per-email deliverability findings (GET /emails/:id/insights and the
 * dashboard's Insights panel). Reads emails and their events through MessagesModule and domains
 * (with their DMARC inspector) through DomainsModule, and the suppression list through
 * SuppressionsModule; relies on the app importing ConfigModule,
 * DatabaseModule and BusModule.
 */
@Module({
  imports: [DomainsModule, MessagesModule, SuppressionsModule],
  providers: [InsightsRepository, DmarcLookup, InsightsService],
  exports: [InsightsService],
})
export class InsightsModule {}
