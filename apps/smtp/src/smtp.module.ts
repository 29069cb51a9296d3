import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { SmtpIngressModule } from '@herald/smtp';

/**
 * The SMTP role: the relay listeners applications send through (SMTP_PORTS: 25, 465, 587, 2465,
 * 2587 by default) and the bounce MX of the Return-Path domains (SmtpIngressModule).
 */
@Module({})
export class SmtpModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: SmtpModule,
      imports: [RuntimeModule.forRole('smtp', config, logging), OpsServerModule, SmtpIngressModule],
    };
  }
}
