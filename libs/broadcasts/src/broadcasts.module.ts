import { Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AccountsModule } from '@herald/accounts';
import { ContactsModule } from '@herald/contacts';
import { DomainsModule } from '@herald/domains';
import { LimitsModule } from '@herald/limits';
import { MessagesModule } from '@herald/messages';
import { SuppressionsModule } from '@herald/suppressions';
import { BroadcastLinks } from './broadcast-links';
import { BroadcastQuota } from './broadcast-quota';
import { BroadcastRecipientsRepository } from './broadcast-recipients.repository';
import { BroadcastReportsService } from './broadcast-reports.service';
import { BroadcastRunner } from './broadcast-runner.service';
import { BROADCASTS_CONFIG } from './broadcasts.config';
import { BroadcastsRepository } from './broadcasts.repository';
import { BroadcastsService } from './broadcasts.service';
import { UnsubscribeService } from './unsubscribe.service';

/**
 * Broadcasts and unsubscribing from them. Relies on the app importing ConfigModule,
 * DatabaseModule, BusModule and ObservabilityModule. The fan-out runs only where
 * BroadcastFanOutModule is imported too (the api role); the smtp role imports this module for
 * the List-Unsubscribe mailbox alone.
 */
@Module({
  imports: [AccountsModule, ContactsModule, DomainsModule, LimitsModule, SuppressionsModule, MessagesModule],
  providers: [
    BROADCASTS_CONFIG.provider,
    BroadcastsRepository,
    BroadcastRecipientsRepository,
    BroadcastLinks,
    BroadcastQuota,
    BroadcastRunner,
    BroadcastsService,
    BroadcastReportsService,
    UnsubscribeService,
  ],
  exports: [BroadcastsService, BroadcastReportsService, UnsubscribeService, BroadcastLinks, BroadcastRunner],
})
export class BroadcastsModule {}

@Injectable()
class BroadcastFanOut implements OnApplicationBootstrap {
  constructor(private readonly runner: BroadcastRunner) {}

  onApplicationBootstrap(): void {
    this.runner.start();
  }
}

/** Starts the fan-out of due broadcasts in this role. */
@Module({ imports: [BroadcastsModule], providers: [BroadcastFanOut] })
export class BroadcastFanOutModule {}
