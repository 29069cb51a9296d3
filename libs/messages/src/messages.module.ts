import { Module } from '@nestjs/common';
import { BroadcastEmailsRepository } from './broadcast-emails.repository';
import { EmailFeedRepository } from './email-feed.repository';
import { ClaimsRepository } from './claims.repository';
import { DispatchReconciler } from './dispatch-reconciler.service';
import { DispatchRepository } from './dispatch.repository';
import { Dispatcher } from './dispatcher.service';
import { EmailEventOutbox } from './email-event-outbox';
import { EmailEventsRepository } from './email-events.repository';
import { EmailRepository } from './email.repository';
import { EmailStore } from './email.store';
import { EngagementRepository } from './engagement.repository';
import { MESSAGES_CONFIG } from './messages.config';
import { MimeUploadsRepository } from './mime-uploads.repository';

/**
 * The email record's owner: the store of emails and their events, the publisher of email
 * events, and the dispatch of send commands. Used by accepting (emails) and delivering
 * (delivery) alike. Relies on the app importing ConfigModule, DatabaseModule, BusModule and
 * ObservabilityModule.
 */
@Module({
  providers: [
    MESSAGES_CONFIG.provider,
    EmailRepository,
    ClaimsRepository,
    EmailEventsRepository,
    DispatchRepository,
    EmailStore,
    EngagementRepository,
    MimeUploadsRepository,
    EmailEventOutbox,
    Dispatcher,
    EmailFeedRepository,
    BroadcastEmailsRepository,
  ],
  exports: [EmailStore, EmailEventOutbox, Dispatcher, EmailFeedRepository, BroadcastEmailsRepository],
})
export class MessagesModule {}

/** The relay of overdue dispatches and leases, for the roles that run it (api and worker). */
@Module({
  imports: [MessagesModule],
  providers: [DispatchReconciler],
  exports: [DispatchReconciler],
})
export class DispatchReconcilerModule {}
