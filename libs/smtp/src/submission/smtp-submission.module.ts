import { Module } from '@nestjs/common';
import { AccountsModule } from '@herald/accounts';
import { DomainsModule } from '@herald/domains';
import { EmailsModule } from '@herald/emails';
import { LimitsModule } from '@herald/limits';
import { MessagesModule } from '@herald/messages';
import { SuppressionsModule } from '@herald/suppressions';
import { SMTP_CONFIG } from '../smtp.config';
import { SmtpSubmissions } from './smtp-submissions.service';

/**
 * The relay's send path (SmtpSubmissions) without the listeners, for SmtpIngressModule and for
 * suites that submit without SMTP. Like EmailsModule it relies on the app importing
 * ConfigModule, DatabaseModule, RedisModule and BusModule (RuntimeModule).
 */
@Module({
  imports: [EmailsModule, MessagesModule, AccountsModule, SuppressionsModule, LimitsModule, DomainsModule],
  providers: [SMTP_CONFIG.provider, SmtpSubmissions],
  exports: [SmtpSubmissions],
})
export class SmtpSubmissionModule {}
