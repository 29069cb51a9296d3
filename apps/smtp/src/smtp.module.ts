import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';

/** The SMTP relay role. Its listeners (ports 25, 465, 587, 2465, 2587) and the bounce MX arrive with the SMTP relay work; today the role runs its runtime, health and metrics. */
@Module({})
export class SmtpModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return { module: SmtpModule, imports: [RuntimeModule.forRole('smtp', config, logging), OpsServerModule] };
  }
}
