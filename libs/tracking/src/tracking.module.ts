import { Module } from '@nestjs/common';
import { MessagesModule } from '@herald/messages';
import { TRACKING_CONFIG } from './tracking.config';
import { TrackingRecorder } from './tracking-recorder';
import { TrackingService } from './tracking.service';

/**
 * The tracking host's work (api role): verify hits and hand them to the tracking stream
 * (TrackingService), and record them from it (TrackingRecorder, behind the role's consumer).
 * Relies on the app importing ConfigModule, DatabaseModule, BusModule and ObservabilityModule.
 */
@Module({
  imports: [MessagesModule],
  providers: [TRACKING_CONFIG.provider, TrackingService, TrackingRecorder],
  exports: [TrackingService, TrackingRecorder],
})
export class TrackingModule {}
