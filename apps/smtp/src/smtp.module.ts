import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { DeliveryStateModule } from '@herald/delivery';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { BounceMxHost } from './bounce-mx.host';

/**
 * The SMTP role. Today it runs the bounce MX of the Return-Path domains; the relay listeners
 * (ports 25, 465, 587, 2465, 2587) arrive with the SMTP relay work.
 */
@Module({})
export class SmtpModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: SmtpModule,
      imports: [RuntimeModule.forRole('smtp', config, logging), OpsServerModule, DeliveryStateModule],
      providers: [BounceMxHost],
    };
  }
}
