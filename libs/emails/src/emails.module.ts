import { Module } from '@nestjs/common';
import { DomainsModule } from '@herald/domains';
import { IdempotencyModule } from '@herald/idempotency';
import { LimitsModule } from '@herald/limits';
import { MessagesModule } from '@herald/messages';
import { EMAILS_CONFIG } from './emails.config';
import { EmailWriter } from './email-writer';
import { EmailsService } from './emails.service';
import { SendService } from './send.service';

/**
 * The emails context: accepting emails, and reading and changing them through the API. The
 * record itself belongs to MessagesModule. Relies on the app importing ConfigModule,
 * DatabaseModule, RedisModule and BusModule.
 */
@Module({
  imports: [IdempotencyModule, LimitsModule, DomainsModule, MessagesModule],
  providers: [EMAILS_CONFIG.provider, EmailWriter, SendService, EmailsService],
  exports: [SendService, EmailsService],
})
export class EmailsModule {}
