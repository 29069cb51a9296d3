import { Module } from '@nestjs/common';
import { AccountsModule } from '@herald/accounts';
import { DomainsModule } from '@herald/domains';
import { LimitsModule } from '@herald/limits';
import { SuppressionsModule } from '@herald/suppressions';
import { EmailsModule } from '../emails.module';
import { SMTP_SUBMISSIONS } from './smtp-submission.types';
import { SmtpSubmissions } from './smtp-submissions.service';

/**
 * The SMTP relay's send path, for the role that runs the listeners: provides SmtpSubmissionPort
 * under SMTP_SUBMISSIONS. Like EmailsModule it relies on the app importing ConfigModule,
 * DatabaseModule, RedisModule and BusModule (RuntimeModule).
 */
@Module({
  imports: [EmailsModule, AccountsModule, SuppressionsModule, LimitsModule, DomainsModule],
  providers: [SmtpSubmissions, { provide: SMTP_SUBMISSIONS, useExisting: SmtpSubmissions }],
  exports: [SmtpSubmissions, SMTP_SUBMISSIONS],
})
export class SmtpSubmissionModule {}
