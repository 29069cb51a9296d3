import { Module } from '@nestjs/common';
import { OUTBOX_CONFIG } from '../outbox.config';
import { ResourceEventOutbox } from './resource-event-outbox';
import { ResourceEventsRepository } from './resource-events.repository';

/**
 * The outbox of domain and suppression events. Relies on the app importing ConfigModule,
 * DatabaseModule and BusModule.
 */
@Module({
  providers: [OUTBOX_CONFIG.provider, ResourceEventsRepository, ResourceEventOutbox],
  exports: [ResourceEventOutbox],
})
export class ResourceEventsModule {}
