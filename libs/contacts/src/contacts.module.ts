import { Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { ResourceEventsModule } from '@herald/outbox';
import { ContactEvents } from './contact-events';
import { ContactImportJobsRepository } from './contact-import-jobs.repository';
import { ContactImportRunner } from './contact-import-runner.service';
import { ContactImportsRepository } from './contact-imports.repository';
import { ContactImportsService } from './contact-imports.service';
import { ContactMembershipsService } from './contact-memberships.service';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { ContactPropertiesService } from './contact-properties.service';
import { CONTACTS_CONFIG } from './contacts.config';
import { ContactsDirectory } from './contacts-directory';
import { ContactsRepository } from './contacts.repository';
import { ContactsService } from './contacts.service';
import { SegmentsRepository } from './segments.repository';
import { SegmentsService } from './segments.service';
import { TopicsRepository } from './topics.repository';
import { TopicsService } from './topics.service';

const SERVICES = [
  ContactsService,
  ContactMembershipsService,
  SegmentsService,
  TopicsService,
  ContactPropertiesService,
  ContactImportsService,
  ContactsDirectory,
];

/**
 * Contacts, segments, topics, contact properties and imports of each team. Relies on the app
 * importing ConfigModule, DatabaseModule and BusModule (contact.* and topic.* events go through
 * the resource event outbox). CSV imports are written in the background only where
 * ContactImportRunnerModule is imported too (the api role).
 */
@Module({
  imports: [ResourceEventsModule],
  providers: [
    ContactsRepository,
    SegmentsRepository,
    TopicsRepository,
    ContactPropertiesRepository,
    ContactImportsRepository,
    ContactImportJobsRepository,
    CONTACTS_CONFIG.provider,
    ContactImportRunner,
    ContactEvents,
    ...SERVICES,
  ],
  exports: [ContactEvents, ContactImportRunner, ...SERVICES],
})
export class ContactsModule {}

@Injectable()
class ContactImportsInBackground implements OnApplicationBootstrap {
  constructor(private readonly runner: ContactImportRunner) {}

  onApplicationBootstrap(): void {
    this.runner.start();
  }
}

/** Starts the background writing of CSV imports in this role. */
@Module({ imports: [ContactsModule], providers: [ContactImportsInBackground] })
export class ContactImportRunnerModule {}
