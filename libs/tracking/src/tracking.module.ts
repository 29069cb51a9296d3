import { Module } from '@nestjs/common';
import { MessagesModule } from '@herald/messages';
import { TRACKING_CONFIG } from './tracking.config';
import { TrackingService } from './tracking.service';

/** The tracking host's work (api role): verify hits, record opens and clicks. Relies on the app importing ConfigModule, DatabaseModule, BusModule and ObservabilityModule. */
@Module({
  imports: [MessagesModule],
  providers: [TRACKING_CONFIG.provider, TrackingService],
  exports: [TrackingService],
})
export class TrackingModule {}
