import { Global, Module } from '@nestjs/common';
import { BUS_CONFIG } from './bus.config';
import { EventPublisher } from './event-publisher';
import { JetStreamPublisher } from './jetstream-publisher';
import { NatsService } from './nats.service';
import { RegionAvailability } from './region-availability';
import { SendPublisher } from './send-publisher';
import { StreamsService } from './streams.service';

/** The role's NATS connection, its streams and the publishers. Needs ConfigModule. */
@Global()
@Module({
  providers: [BUS_CONFIG.provider, NatsService, StreamsService, JetStreamPublisher, RegionAvailability, SendPublisher, EventPublisher],
  exports: [NatsService, StreamsService, JetStreamPublisher, RegionAvailability, SendPublisher, EventPublisher],
})
export class BusModule {}
