import { Module } from '@nestjs/common';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** The webhooks context: endpoints and their signing secrets. Relies on the app importing ConfigModule and DatabaseModule. */
@Module({
  providers: [WebhooksRepository, WebhooksService],
  exports: [WebhooksRepository, WebhooksService],
})
export class WebhooksModule {}
