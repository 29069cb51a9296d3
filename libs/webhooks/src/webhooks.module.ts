import { Module } from '@nestjs/common';
import { WebhookEventLogRepository } from './webhook-event-log.repository';
import { WebhookEventsService } from './webhook-events.service';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** The webhooks context: endpoints, their signing secrets, and their event log. Relies on the app importing ConfigModule and DatabaseModule. */
@Module({
  providers: [WebhooksRepository, WebhooksService, WebhookEventLogRepository, WebhookEventsService],
  exports: [WebhooksRepository, WebhooksService, WebhookEventLogRepository, WebhookEventsService],
})
export class WebhooksModule {}
