import { Injectable } from '@nestjs/common';
import { HeraldError } from '@herald/core';
import { validateListQuery, validateUpdateContactTopics, resourceId } from './contact-input.validation';
import { pageOf, presentContactTopic, presentSegmentListItem, wireList } from './contact.presenter';
import type { ContactTopic, TopicSubscription } from './contact.types';
import { ContactsRepository } from './contacts.repository';
import { ContactsService } from './contacts.service';
import { SegmentsRepository } from './segments.repository';
import { TopicsRepository } from './topics.repository';

const segmentNotFound = () => new HeraldError('not_found', 'Segment not found');

/** A contact's segments and topic subscriptions: /contacts/:idOrEmail/segments and /contacts/:idOrEmail/topics. */
@Injectable()
export class ContactMembershipsService {
  constructor(
    private readonly contactsService: ContactsService,
    private readonly contacts: ContactsRepository,
    private readonly segments: SegmentsRepository,
    private readonly topics: TopicsRepository,
  ) {}

  async listSegments(teamId: string, idOrEmail: string, query: unknown) {
    const page = validateListQuery(query);
    const contact = await this.contactsService.find(teamId, idOrEmail);
    return wireList(pageOf(await this.segments.ofContact(teamId, contact.id), page), presentSegmentListItem);
  }

  /** POST /contacts/:idOrEmail/segments/:segmentId: `{id}` of the segment. Emits contact.updated. */
  async addToSegment(teamId: string, idOrEmail: string, segment: string, homeRegion?: string) {
    const segmentId = resourceId(segment, 'segment');
    if (!(await this.segments.get(teamId, segmentId))) throw segmentNotFound();
    await this.contactsService.changeContact(
      teamId,
      idOrEmail,
      async (contact, tx) => {
        await this.contacts.addToSegments(teamId, contact.id, [segmentId], tx);
        return contact;
      },
      homeRegion,
    );
    return { id: segmentId };
  }

  /** DELETE /contacts/:idOrEmail/segments/:segmentId: `{id, deleted}`. Emits contact.updated. */
  async removeFromSegment(teamId: string, idOrEmail: string, segment: string, homeRegion?: string) {
    const segmentId = resourceId(segment, 'segment');
    if (!(await this.segments.get(teamId, segmentId))) throw segmentNotFound();
    await this.contactsService.changeContact(
      teamId,
      idOrEmail,
      async (contact, tx) => {
        if (!(await this.contacts.removeFromSegment(teamId, contact.id, segmentId, tx))) {
          throw new HeraldError('not_found', 'The contact is not in this segment');
        }
        return contact;
      },
      homeRegion,
    );
    return { id: segmentId, deleted: true };
  }

  /** GET /contacts/:idOrEmail/topics: every topic of the team with the contact's subscription. */
  async listTopics(teamId: string, idOrEmail: string, query: unknown) {
    const page = validateListQuery(query);
    const contact = await this.contactsService.find(teamId, idOrEmail);
    const topics = await this.topicsOf(teamId, contact.id);
    const cut = pageOf(
      topics.map((t) => ({ id: t.topic.id, t })),
      page,
    );
    return wireList({ items: cut.items.map((i) => i.t), hasMore: cut.hasMore }, presentContactTopic);
  }

  /** PATCH /contacts/:idOrEmail/topics with `[{id, subscription}]`. Emits contact.updated and contact.topics.updated. */
  async updateTopics(teamId: string, idOrEmail: string, body: unknown, homeRegion?: string) {
    const choices = validateUpdateContactTopics(body);
    // The contact first: an unknown contact is a 404 whatever the body names.
    await this.contactsService.find(teamId, idOrEmail);
    await this.contactsService.checkTopics(
      teamId,
      choices.map((c) => c.id),
      'topics',
    );
    const contact = await this.contactsService.changeContact(
      teamId,
      idOrEmail,
      async (contact, tx) => {
        await this.contacts.setSubscriptions(teamId, contact.id, choices, tx);
        return contact;
      },
      homeRegion,
      undefined,
      (after) => [{ type: 'contact.topics.updated', email: after.email, topics: choices }],
    );
    return { id: contact.id };
  }

  /** Every topic of the team, with the contact's explicit choice or else the topic's default. */
  async topicsOf(teamId: string, contactId: string): Promise<ContactTopic[]> {
    const [topics, chosen] = await Promise.all([this.topics.all(teamId), this.contacts.subscriptionsOf(teamId, contactId)]);
    return topics.map((topic) => ({ topic, subscription: chosen.get(topic.id) ?? (topic.defaultSubscription satisfies TopicSubscription) }));
  }
}
