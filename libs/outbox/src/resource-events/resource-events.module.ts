import { Module } from '@nestjs/common';
import { ResourceEventOutbox } from './resource-event-outbox';
import { ResourceEventsRepository } from './resource-events.repository';

/**
 * The outbox of domain and suppression events. Relies on the app importing ConfigModule,
 * DatabaseModule and BusModule.
 */
@Module({
  providers: [ResourceEventsRepository, ResourceEventOutbox],
  exports: [ResourceEventOutbox],
})
export class ResourceEventsModule {}
