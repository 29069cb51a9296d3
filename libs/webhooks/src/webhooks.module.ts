import { Module } from '@nestjs/common';
import { WebhookEventLogRepository } from './webhook-event-log.repository';
import { WebhookEventsService } from './webhook-events.service';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';
import { WEBHOOKS_CONFIG } from './webhooks.config';

/** The webhooks context: endpoints, their signing secrets, and their event log. Relies on the app importing ConfigModule and DatabaseModule. */
@Module({
  providers: [WEBHOOKS_CONFIG.provider, WebhooksRepository, WebhooksService, WebhookEventLogRepository, WebhookEventsService],
  exports: [WebhooksRepository, WebhooksService, WebhookEventLogRepository, WebhookEventsService],
})
export class WebhooksModule {}
