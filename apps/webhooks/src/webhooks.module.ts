import { DynamicModule, Module } from '@nestjs/common';
import { eventsStreamName, eventSubjects, jetStreamConsumers } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { WebhookDispatchModule, WebhookDispatchOptions } from '@herald/webhooks';
import { WebhookEventsHandler } from './webhook-events.handler';

/** Shared by every webhooks process of the region, so they split the events between them. */
export const WEBHOOKS_DURABLE = 'webhooks';

/** The webhook dispatcher role: fans its region's events out into webhook messages and delivers them. */
@Module({})
export class WebhooksModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}, dispatch: Partial<WebhookDispatchOptions> = {}): DynamicModule {
    return {
      module: WebhooksModule,
      imports: [RuntimeModule.forRole('webhooks', config, logging), OpsServerModule, WebhookDispatchModule.forRoot(dispatch)],
      providers: [
        WebhookEventsHandler,
        jetStreamConsumers([
          {
            stream: eventsStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
            durable: WEBHOOKS_DURABLE,
            filterSubject: eventSubjects(config.NATS_NAMESPACE, config.HERALD_REGION),
            handler: WebhookEventsHandler,
            maxAckPending: 256,
          },
        ]),
      ],
    };
  }
}
