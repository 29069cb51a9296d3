import { Module } from '@nestjs/common';
import { BroadcastsModule } from '@herald/broadcasts';
import { DeliveryStateModule } from '@herald/delivery';
import { BounceMxHost } from './bounce/bounce-mx.host';
import { RelayHost } from './relay.host';
import { SMTP_CONFIG } from './smtp.config';
import { SmtpSubmissionModule } from './submission/smtp-submission.module';

/**
 * SMTP ingress: the relay listeners applications send through (SMTP_PORTS), each message turned
 * into an accepted email by SmtpSubmissions through the send path of @herald/emails, and the
 * bounce MX of the Return-Path domains (BOUNCE_MX_HOST:BOUNCE_MX_PORT), each report handed to
 * LateReports of @herald/delivery. Both listeners stop before NATS drains. Like the other
 * contexts it relies on the role's RuntimeModule for config, Postgres, Redis and NATS.
 */
@Module({
  imports: [DeliveryStateModule, SmtpSubmissionModule, BroadcastsModule],
  providers: [SMTP_CONFIG.provider, RelayHost, BounceMxHost],
  exports: [RelayHost, BounceMxHost],
})
export class SmtpIngressModule {}
