import { DynamicModule, Module } from '@nestjs/common';
import { WebhookClaimsRepository } from './webhook-claims.repository';
import { WEBHOOK_DISPATCH_OPTIONS, WebhookDispatchOptions } from './webhook-dispatch.options';
import { WebhookDispatcher } from './webhook-dispatcher.service';
import { WebhookFanOutService } from './webhook-fan-out.service';
import { WebhookMessagesRepository } from './webhook-messages.repository';
import { WEBHOOKS_CONFIG } from './webhooks.config';

/**
 * Delivery of events to webhooks: fan-out into messages and the dispatcher that POSTs them.
 * Only the webhooks role imports it (the dispatcher polls from bootstrap on). Relies on the app
 * importing ConfigModule and DatabaseModule.
 */
@Module({})
export class WebhookDispatchModule {
  static forRoot(options: Partial<WebhookDispatchOptions> = {}): DynamicModule {
    return {
      module: WebhookDispatchModule,
      providers: [
        WEBHOOKS_CONFIG.provider,
        WebhookMessagesRepository,
        WebhookClaimsRepository,
        WebhookFanOutService,
        WebhookDispatcher,
        { provide: WEBHOOK_DISPATCH_OPTIONS, useValue: options },
      ],
      exports: [WebhookMessagesRepository, WebhookFanOutService, WebhookDispatcher],
    };
  }
}
