import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { DeliveryStateModule } from '@herald/delivery';
import { SmtpSubmissionModule } from '@herald/emails';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RelayHost } from '@herald/relay';
import { RuntimeModule } from '@herald/runtime';
import { BounceMxHost } from './bounce-mx.host';

/**
 * The SMTP role: the relay listeners applications send through (SMTP_PORTS: 25, 465, 587, 2465,
 * 2587 by default) and the bounce MX of the Return-Path domains. Both stop before NATS drains.
 */
@Module({})
export class SmtpModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: SmtpModule,
      imports: [RuntimeModule.forRole('smtp', config, logging), OpsServerModule, DeliveryStateModule, SmtpSubmissionModule],
      providers: [BounceMxHost, RelayHost],
    };
  }
}
