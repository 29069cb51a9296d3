import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { WebhookDispatchModule, WebhookDispatchOptions } from '@herald/webhooks';
import { WebhookEventsHandler } from './webhook-events.handler';

/** The webhook dispatcher role: fans its region's events out into webhook messages and delivers them. */
@Module({})
export class WebhooksModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}, dispatch: Partial<WebhookDispatchOptions> = {}): DynamicModule {
    return {
      module: WebhooksModule,
      imports: [RuntimeModule.forRole('webhooks', config, logging), OpsServerModule, WebhookDispatchModule.forRoot(dispatch)],
      controllers: [WebhookEventsHandler],
    };
  }
}
