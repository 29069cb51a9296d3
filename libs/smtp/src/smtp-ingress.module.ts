import { DynamicModule, Module, type Type } from '@nestjs/common';
import { DeliveryStateModule } from '@herald/delivery';
import { BounceMxHost } from './bounce-mx.host';
import { RelayHost } from './relay.host';

/**
 * SMTP ingress: the relay listeners applications send through (SMTP_PORTS) and the bounce MX of
 * the Return-Path domains (BOUNCE_MX_HOST:BOUNCE_MX_PORT), both stopping before NATS drains. The
 * relay asks the send path through the port it declares (SMTP_SUBMISSIONS), provided by the
 * module the role passes in (SmtpSubmissionModule of @herald/emails), so this context does not
 * import the send path. Like the other contexts it relies on the role's RuntimeModule for config,
 * Postgres, Redis and NATS.
 */
@Module({})
export class SmtpIngressModule {
  static forSubmissions(submissions: Type): DynamicModule {
    return {
      module: SmtpIngressModule,
      imports: [DeliveryStateModule, submissions],
      providers: [RelayHost, BounceMxHost],
      exports: [RelayHost, BounceMxHost],
    };
  }
}
