import { Module } from '@nestjs/common';
import { DomainsModule } from '@herald/domains';
import { SuppressionsModule } from '@herald/suppressions';
import { MessagesModule } from '@herald/messages';
import { DELIVERY_CONFIG } from './delivery.config';
import { DeliveryService, TRANSMITTER } from './engine/delivery.service';
import { LateReports } from './engine/late-reports';
import { SenderIdentities } from './engine/sender-identity';
import { SmtpTransmitterHost } from './engine/transmitter.provider';

/**
 * Shared by the worker (the sender pipeline) and the smtp role (late bounces and complaints):
 * the email store and outbox (MessagesModule) and what delivery needs beside them. Relies on the
 * app importing ConfigModule, DatabaseModule, BusModule and ObservabilityModule.
 */
@Module({
  imports: [MessagesModule, DomainsModule, SuppressionsModule],
  providers: [DELIVERY_CONFIG.provider, LateReports],
  exports: [LateReports, MessagesModule, DomainsModule, SuppressionsModule],
})
export class DeliveryStateModule {}

/** The sender pipeline of the worker role, sending through SMTP to recipients' MX hosts. */
@Module({
  imports: [DeliveryStateModule],
  providers: [
    DELIVERY_CONFIG.provider,
    SenderIdentities,
    SmtpTransmitterHost,
    { provide: TRANSMITTER, inject: [SmtpTransmitterHost], useFactory: (host: SmtpTransmitterHost) => host.transmitter },
    DeliveryService,
  ],
  exports: [DeliveryService],
})
export class DeliveryModule {}
