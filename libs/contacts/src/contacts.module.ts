import { Module } from '@nestjs/common';
import { ResourceEventsModule } from '@herald/outbox';
import { ContactEvents } from './contact-events';
import { ContactImportsRepository } from './contact-imports.repository';
import { ContactImportsService } from './contact-imports.service';
import { ContactMembershipsService } from './contact-memberships.service';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { ContactPropertiesService } from './contact-properties.service';
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
 * the resource event outbox).
 */
@Module({
  imports: [ResourceEventsModule],
  providers: [
    ContactsRepository,
    SegmentsRepository,
    TopicsRepository,
    ContactPropertiesRepository,
    ContactImportsRepository,
    ContactEvents,
    ...SERVICES,
  ],
  exports: [ContactEvents, ...SERVICES],
})
export class ContactsModule {}
