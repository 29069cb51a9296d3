import { Module } from '@nestjs/common';
import { DomainsModule } from '@herald/domains';
import { SuppressionsModule } from '@herald/suppressions';
import { DeliveryRepository } from './engine/delivery.repository';
import { DeliveryService, TRANSMITTER } from './engine/delivery.service';
import { EmailEventsRepository } from './engine/email-events.repository';
import { EventOutbox } from './engine/event-outbox';
import { LateReports } from './engine/late-reports';
import { SenderIdentities } from './engine/sender-identity';
import { SmtpTransmitterHost } from './engine/transmitter.provider';

/**
 * Shared by the worker (the sender pipeline) and the smtp role (late bounces and complaints):
 * the delivery state in Postgres and the outbox of email events. Relies on the app importing
 * ConfigModule, DatabaseModule, BusModule and ObservabilityModule.
 */
@Module({
  imports: [DomainsModule, SuppressionsModule],
  providers: [DeliveryRepository, EmailEventsRepository, EventOutbox, LateReports],
  exports: [DeliveryRepository, EmailEventsRepository, EventOutbox, LateReports, DomainsModule, SuppressionsModule],
})
export class DeliveryStateModule {}

/** The sender pipeline of the worker role, sending through SMTP to recipients' MX hosts. */
@Module({
  imports: [DeliveryStateModule],
  providers: [
    SenderIdentities,
    SmtpTransmitterHost,
    { provide: TRANSMITTER, inject: [SmtpTransmitterHost], useFactory: (host: SmtpTransmitterHost) => host.transmitter },
    DeliveryService,
  ],
  exports: [DeliveryService],
})
export class DeliveryModule {}
