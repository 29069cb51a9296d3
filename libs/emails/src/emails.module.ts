import { Module } from '@nestjs/common';
import { DeliveryStateModule } from '@herald/delivery';
import { DomainsModule } from '@herald/domains';
import { IdempotencyModule } from '@herald/idempotency';
import { LimitsModule } from '@herald/limits';
import { Dispatcher } from './dispatcher.service';
import { DispatchReconciler } from './dispatch-reconciler.service';
import { EmailRepository } from './email.repository';
import { EmailWriter } from './email-writer';
import { EmailsService } from './emails.service';
import { ScheduledEmailEvents } from './scheduled-email-events';
import { SendService } from './send.service';

/**
 * The emails context: accepting, storing, dispatching and reading emails. Relies on the app
 * importing ConfigModule, DatabaseModule, RedisModule and BusModule.
 */
@Module({
  imports: [IdempotencyModule, LimitsModule, DomainsModule, DeliveryStateModule],
  providers: [EmailRepository, EmailWriter, Dispatcher, ScheduledEmailEvents, SendService, EmailsService],
  exports: [SendService, EmailsService],
})
export class EmailsModule {}

/** The reconciler, for the roles that run it (the API of each region). */
@Module({
  providers: [DispatchReconciler],
  exports: [DispatchReconciler],
})
export class DispatchReconcilerModule {}
