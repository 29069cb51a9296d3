import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';

/** The webhook dispatcher role. It will consume its region's event stream and POST signed events (the webhooks work); today it runs its runtime, health and metrics. */
@Module({})
export class WebhooksModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return { module: WebhooksModule, imports: [RuntimeModule.forRole('webhooks', config, logging), OpsServerModule] };
  }
}
