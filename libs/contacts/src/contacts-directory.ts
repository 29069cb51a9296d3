import { Injectable } from '@nestjs/common';
import { isoTimestamp, newId } from '@herald/core';
import type { Transaction } from '@herald/database';
import { ContactEvents, type ContactChange, type ContactFact } from './contact-events';
import { normalizeContactEmail } from './contact-input.validation';
import type {
  Contact,
  ContactProperty,
  ContactTopic,
  ContactWithSegments,
  PropertyValue,
  Segment,
  SegmentMember,
  Topic,
  TopicSubscription,
} from './contact.types';
import { ContactMembershipsService } from './contact-memberships.service';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { ContactsRepository } from './contacts.repository';
import { SegmentsRepository } from './segments.repository';
import { TopicsRepository } from './topics.repository';

export const MAX_MEMBERS_PAGE = 5000;

/** Every defined property: the contact's value, else the fallback, else null. */
function resolveProperties(
  values: Record<string, PropertyValue>,
  definitions: Map<string, ContactProperty>,
  raw = false,
): Record<string, PropertyValue | null> {
  const properties: Record<string, PropertyValue | null> = {};
  for (const [key, definition] of definitions) properties[key] = values[key] ?? (raw ? null : definition.fallbackValue) ?? null;
  return properties;
}

/** A change's outcome in the caller's transaction: `publish` after the commit. */
export interface Published<T> {
  result: T;
  publish: () => Promise<void>;
}

/**
 * What other contexts (broadcasts, the unsubscribe page) read and change of a team's contacts,
 * without HTTP: a segment's members page by page, lookups, and the unsubscribe changes, each
 * recording contact.updated in the same transaction. See notes/contacts-contract.md.
 */
@Injectable()
export class ContactsDirectory {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly segments: SegmentsRepository,
    private readonly topics: TopicsRepository,
    private readonly properties: ContactPropertiesRepository,
    private readonly memberships: ContactMembershipsService,
    private readonly events: ContactEvents,
  ) {}

  /**
   * One page of a segment's members in contact id order (a stable keyset: ids are UUIDv7 and
   * never change), after `afterContactId` (null: from the start). `nextAfter` is the cursor of
   * the next page, null after the last. Members come with every defined property resolved (the
   * contact's value, else the fallback, else null) and, when `topicId` is given, their
   * subscription to it (their own choice, else the topic's default). With `rawProperties`, the
   * properties are the contact's own values only (null when unset), for a caller that applies an
   * inline fallback before the property's (propertyFallbacks has those). Unsubscribed contacts are
   * included: skipping them is the caller's decision (`unsubscribed`).
   */
  async segmentMembersPage(
    teamId: string,
    segmentId: string,
    options: { afterContactId?: string | null; limit?: number; topicId?: string | null; rawProperties?: boolean } = {},
  ): Promise<{ members: SegmentMember[]; nextAfter: string | null }> {
    const limit = Math.min(Math.max(options.limit ?? 1000, 1), MAX_MEMBERS_PAGE);
    const topicId = options.topicId ?? null;
    const [definitions, topic] = await Promise.all([this.properties.byKey(teamId), topicId ? this.topics.get(teamId, topicId) : null]);
    const rows = await this.contacts.segmentMembers(teamId, segmentId, options.afterContactId ?? null, limit, topicId);
    const members = rows.map((row): SegmentMember => {
      const properties = resolveProperties(row.properties, definitions, options.rawProperties);
      return {
        contactId: row.id,
        email: row.email,
        firstName: row.firstName,
        lastName: row.lastName,
        unsubscribed: row.unsubscribed,
        properties,
        // A topic deleted since: nobody is subscribed to what no longer exists.
        topicSubscription: topicId ? (topic ? (row.subscription ?? topic.defaultSubscription) : 'opt_out') : null,
      };
    });
    return { members, nextAfter: rows.length === limit ? rows[rows.length - 1].id : null };
  }

  /** How many of the segment's members a broadcast (with this topic, if any) would write to, suppressions aside. */
  async countSendable(teamId: string, segmentId: string, topicId: string | null): Promise<number> {
    if (!topicId) return this.contacts.countSendable(teamId, segmentId, null);
    const topic = await this.topics.get(teamId, topicId);
    // A topic deleted since: nobody is subscribed to what no longer exists.
    return topic ? this.contacts.countSendable(teamId, segmentId, topic) : 0;
  }

  /** One contact as segmentMembersPage describes its members (a test send, a preview); null when the team has no such contact. */
  async member(teamId: string, contactId: string, topicId: string | null = null, rawProperties = false): Promise<SegmentMember | null> {
    const [contact, definitions, topic] = await Promise.all([
      this.contacts.getById(teamId, contactId),
      this.properties.byKey(teamId),
      topicId ? this.topics.get(teamId, topicId) : null,
    ]);
    if (!contact) return null;
    const chosen = topicId && topic ? (await this.contacts.subscriptionsOf(teamId, contactId)).get(topicId) : undefined;
    return {
      contactId: contact.id,
      email: contact.email,
      firstName: contact.firstName,
      lastName: contact.lastName,
      unsubscribed: contact.unsubscribed,
      properties: resolveProperties(contact.properties, definitions, rawProperties),
      topicSubscription: topicId ? (topic ? (chosen ?? topic.defaultSubscription) : 'opt_out') : null,
    };
  }

  /** Every property the team defines with its fallback_value (null when it has none): the merge values of no contact in particular. */
  async propertyFallbacks(teamId: string): Promise<Record<string, PropertyValue | null>> {
    return resolveProperties({}, await this.properties.byKey(teamId));
  }

  countSegmentMembers(teamId: string, segmentId: string): Promise<number> {
    return this.contacts.countSegmentMembers(teamId, segmentId);
  }

  /** The team's contact at this address (any case; `Name <addr>` is not an address here). */
  findByEmail(teamId: string, email: string): Promise<Contact | null> {
    const address = normalizeContactEmail(email);
    return address ? this.contacts.getByEmail(teamId, address) : Promise.resolve(null);
  }

  findById(teamId: string, contactId: string): Promise<Contact | null> {
    return this.contacts.getById(teamId, contactId);
  }

  getSegment(teamId: string, segmentId: string): Promise<Segment | null> {
    return this.segments.get(teamId, segmentId);
  }

  getTopic(teamId: string, topicId: string): Promise<Topic | null> {
    return this.topics.get(teamId, topicId);
  }

  /** Every topic of the team with the contact's subscription resolved (for a preference page; filter on `topic.visibility`). */
  topicsOf(teamId: string, contactId: string): Promise<ContactTopic[]> {
    return this.memberships.topicsOf(teamId, contactId);
  }

  /** Runs `work` in a new transaction (to call the `…Within` methods with). */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.contacts.transaction(work);
  }

  /**
   * Sets `unsubscribed` (true: a global opt-out of every broadcast) and records contact.updated
   * in the same transaction, then publishes it. Null when the team has no such contact; a
   * contact already in that state is answered unchanged and announces nothing.
   */
  setUnsubscribed(teamId: string, contactId: string, unsubscribed = true, homeRegion?: string): Promise<ContactWithSegments | null> {
    return this.events.change(teamId, (tx) => this.unsubscribedChange(tx, teamId, contactId, unsubscribed), homeRegion);
  }

  /** The same in the caller's transaction `tx`: call `publish` once `tx` has committed. */
  setUnsubscribedWithin(
    tx: Transaction,
    teamId: string,
    contactId: string,
    unsubscribed = true,
    homeRegion?: string,
  ): Promise<Published<ContactWithSegments | null>> {
    return this.events.changeWithin(tx, teamId, (tx) => this.unsubscribedChange(tx, teamId, contactId, unsubscribed), homeRegion);
  }

  /**
   * One click's unsubscribe from everything, in one statement: the contact and its
   * `contact.updated` in the outbox (ContactsRepository.unsubscribeRecordingEvent), published
   * after the commit without waiting. Null when nothing changed (no such contact, or unsubscribed
   * already): the caller takes the general path, which tells those apart.
   */
  async unsubscribeAtOnce(teamId: string, contactId: string, homeRegion: string): Promise<ContactWithSegments | null> {
    const event = { id: newId(), region: homeRegion, createdAt: new Date() };
    const done = await this.contacts.unsubscribeRecordingEvent(teamId, contactId, event);
    if (!done) return null;
    void this.events.publishRecorded(homeRegion, [
      { id: event.id, type: 'contact.updated', created_at: isoTimestamp(event.createdAt), team_id: teamId, data: done.data },
    ]);
    return done.contact;
  }

  /**
   * Sets the contact's subscription to one topic and records contact.updated and
   * contact.topics.updated in the same transaction. Null when the team has no such contact or
   * topic; an unchanged choice announces nothing.
   */
  setTopicSubscription(
    teamId: string,
    contactId: string,
    topicId: string,
    subscription: TopicSubscription,
    homeRegion?: string,
  ): Promise<ContactWithSegments | null> {
    return this.events.change(teamId, (tx) => this.topicChange(tx, teamId, contactId, topicId, subscription), homeRegion);
  }

  setTopicSubscriptionWithin(
    tx: Transaction,
    teamId: string,
    contactId: string,
    topicId: string,
    subscription: TopicSubscription,
    homeRegion?: string,
  ): Promise<Published<ContactWithSegments | null>> {
    return this.events.changeWithin(tx, teamId, (tx) => this.topicChange(tx, teamId, contactId, topicId, subscription), homeRegion);
  }

  private async unsubscribedChange(
    tx: Transaction,
    teamId: string,
    contactId: string,
    unsubscribed: boolean,
  ): Promise<ContactChange<ContactWithSegments | null>> {
    // The usual case (an unsubscribe link clicked) in one statement; the rest under a lock.
    const changed = await this.contacts.setUnsubscribedIfChanged(teamId, contactId, unsubscribed, tx);
    if (changed) return { result: changed, announce: [{ type: 'contact.updated', contact: changed }] };
    const contact = await this.contacts.lock(teamId, { id: contactId }, tx);
    if (!contact) return { result: null, announce: [] };
    if (contact.unsubscribed === unsubscribed) return { result: await this.contacts.withSegments(teamId, contact, tx), announce: [] };
    const updated = await this.contacts.update(teamId, contactId, { unsubscribed }, tx);
    const after = await this.contacts.withSegments(teamId, updated ?? contact, tx);
    return { result: after, announce: [{ type: 'contact.updated', contact: after }] };
  }

  private async topicChange(
    tx: Transaction,
    teamId: string,
    contactId: string,
    topicId: string,
    subscription: TopicSubscription,
  ): Promise<ContactChange<ContactWithSegments | null>> {
    const contact = await this.contacts.lock(teamId, { id: contactId }, tx);
    const topic = contact ? await this.topics.get(teamId, topicId, tx) : null;
    if (!contact || !topic) return { result: null, announce: [] };
    const current = (await this.contacts.subscriptionsOf(teamId, contactId, tx)).get(topicId);
    if (current === subscription) return { result: await this.contacts.withSegments(teamId, contact, tx), announce: [] };
    await this.contacts.setSubscriptions(teamId, contactId, [{ id: topicId, subscription }], tx);
    const updated = await this.contacts.update(teamId, contactId, {}, tx);
    const after = await this.contacts.withSegments(teamId, updated ?? contact, tx);
    const facts: ContactFact[] = [
      { type: 'contact.updated', contact: after },
      { type: 'contact.topics.updated', email: after.email, topics: [{ id: topicId, subscription }] },
    ];
    return { result: after, announce: facts };
  }
}
