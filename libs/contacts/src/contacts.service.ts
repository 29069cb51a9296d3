import { Injectable } from '@nestjs/common';
import { HeraldError, newId } from '@herald/core';
import type { Transaction } from '@herald/database';
import { ContactEvents, type ContactFact } from './contact-events';
import {
  contactIdentifier,
  validateContactSearchQuery,
  validateCreateContact,
  validateListQuery,
  validateUpdateContact,
} from './contact-input.validation';
import { contactReference, deletedContact, presentContact, presentContactListItem, wireList } from './contact.presenter';
import type { Contact, ContactProperty, ContactWithSegments, PropertyValue } from './contact.types';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { ContactsRepository } from './contacts.repository';
import { SegmentsRepository } from './segments.repository';
import { TopicsRepository } from './topics.repository';

export const contactNotFound = () => new HeraldError('not_found', 'Contact not found');
const invalid = (message: string) => new HeraldError('validation_error', message);

/**
 * Checks custom values against the team's definitions: each key must be a defined property and
 * each value of its type (a numeric string is taken for a number property). Null unsets.
 */
export function checkProperties(
  values: Record<string, PropertyValue | null>,
  definitions: Map<string, ContactProperty>,
  field = 'properties',
): Record<string, PropertyValue | null> {
  const out: Record<string, PropertyValue | null> = {};
  for (const [key, value] of Object.entries(values)) {
    const definition = definitions.get(key);
    if (!definition)
      throw invalid(`The \`${field}.${key}\` field is not a contact property of this team; create it first (POST /contact-properties).`);
    if (value === null) out[key] = null;
    else if (definition.type === 'string') out[key] = String(value);
    else {
      const number = typeof value === 'number' ? value : value.trim() === '' ? NaN : Number(value);
      if (!Number.isFinite(number)) throw invalid(`The \`${field}.${key}\` field must be a number.`);
      out[key] = number;
    }
  }
  return out;
}

const withoutNulls = (values: Record<string, PropertyValue | null>): Record<string, PropertyValue> =>
  Object.fromEntries(Object.entries(values).filter((entry): entry is [string, PropertyValue] => entry[1] !== null));

/** The /contacts API: a team's contacts, one per address. */
@Injectable()
export class ContactsService {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly segments: SegmentsRepository,
    private readonly topics: TopicsRepository,
    private readonly properties: ContactPropertiesRepository,
    private readonly events: ContactEvents,
  ) {}

  /** POST /contacts (and POST /audiences/:id/contacts, `segmentId` given). Emits contact.created. */
  async create(teamId: string, body: unknown, homeRegion?: string, segmentId?: string) {
    const input = validateCreateContact(body);
    if (segmentId) input.segmentIds = [...new Set([segmentId, ...input.segmentIds])];
    const properties = withoutNulls(checkProperties(input.properties, await this.properties.byKey(teamId)));
    await this.checkSegments(teamId, input.segmentIds, segmentId ? 'audience_id' : 'segments');
    await this.checkTopics(
      teamId,
      input.topics.map((t) => t.id),
    );
    const created = await this.events.change(
      teamId,
      async (tx) => {
        const contact = await this.contacts.insert(teamId, { id: newId(), ...input, properties }, tx);
        if (!contact) throw invalid(`A contact with this \`email\` (${input.email}) exists already; update it with PATCH /contacts/${input.email}.`);
        await this.contacts.addToSegments(teamId, contact.id, input.segmentIds, tx);
        await this.contacts.setSubscriptions(teamId, contact.id, input.topics, tx);
        const described = await this.contacts.withSegments(teamId, contact, tx);
        return { result: contact, announce: [{ type: 'contact.created', contact: described }] };
      },
      homeRegion,
    );
    return contactReference(created);
  }

  async get(teamId: string, idOrEmail: string, segmentId?: string) {
    const contact = await this.find(teamId, idOrEmail, segmentId);
    return presentContact(contact, await this.properties.byKey(teamId));
  }

  /** GET /contacts, or a segment's members (GET /segments/:id/contacts). */
  async list(teamId: string, query: unknown, segmentId?: string) {
    const page = validateListQuery(query);
    if (segmentId && !(await this.segments.get(teamId, segmentId))) throw new HeraldError('not_found', 'Segment not found');
    return wireList(await this.contacts.listPage(teamId, { ...page, segmentId }), presentContactListItem);
  }

  /** The dashboard's list: `q` searches the addresses, `segment_id` narrows to a segment. */
  async search(teamId: string, query: unknown) {
    return wireList(await this.contacts.listPage(teamId, validateContactSearchQuery(query)), presentContactListItem);
  }

  /** PATCH /contacts/:idOrEmail. Emits contact.updated. */
  async update(teamId: string, idOrEmail: string, body: unknown, homeRegion?: string, segmentId?: string) {
    const patch = validateUpdateContact(body);
    if (patch.properties) patch.properties = checkProperties(patch.properties, await this.properties.byKey(teamId));
    const updated = await this.changeContact(
      teamId,
      idOrEmail,
      async (contact, tx) => (await this.contacts.update(teamId, contact.id, patch, tx)) ?? contact,
      homeRegion,
      segmentId,
    );
    return contactReference(updated);
  }

  /** DELETE /contacts/:idOrEmail. Emits contact.deleted (with the segments it was in). */
  async remove(teamId: string, idOrEmail: string, homeRegion?: string, segmentId?: string) {
    const key = contactIdentifier(idOrEmail);
    const removed = await this.events.change(
      teamId,
      async (tx) => {
        const contact = await this.contacts.lock(teamId, key, tx);
        if (!contact || (segmentId && !(await this.contacts.segmentIdsOf(teamId, contact.id, tx)).includes(segmentId))) throw contactNotFound();
        const described = await this.contacts.withSegments(teamId, contact, tx);
        await this.contacts.delete(teamId, contact.id, tx);
        return { result: contact, announce: [{ type: 'contact.deleted', contact: described }] };
      },
      homeRegion,
    );
    return deletedContact(removed);
  }

  /**
   * Runs `change` on the locked contact in a transaction that records contact.updated (and any
   * `more` facts) with the contact as it is after the change.
   */
  async changeContact(
    teamId: string,
    idOrEmail: string | { id: string } | { email: string },
    change: (contact: Contact, tx: Transaction) => Promise<Contact>,
    homeRegion?: string,
    segmentId?: string,
    more: (after: ContactWithSegments) => ContactFact[] = () => [],
  ): Promise<ContactWithSegments> {
    return this.events.change(teamId, (tx) => this.changeContactIn(tx, teamId, idOrEmail, change, segmentId, more), homeRegion);
  }

  /** The same within the caller's transaction. */
  async changeContactIn(
    tx: Transaction,
    teamId: string,
    idOrEmail: string | { id: string } | { email: string },
    change: (contact: Contact, tx: Transaction) => Promise<Contact>,
    segmentId?: string,
    more: (after: ContactWithSegments) => ContactFact[] = () => [],
  ) {
    const key = typeof idOrEmail === 'string' ? contactIdentifier(idOrEmail) : idOrEmail;
    const contact = await this.contacts.lock(teamId, key, tx);
    if (!contact || (segmentId && !(await this.contacts.segmentIdsOf(teamId, contact.id, tx)).includes(segmentId))) throw contactNotFound();
    const after = await this.contacts.withSegments(teamId, await change(contact, tx), tx);
    const facts: ContactFact[] = [{ type: 'contact.updated', contact: after }, ...more(after)];
    return { result: after, announce: facts };
  }

  /** The contact named by a path's id or address (within a segment's members when `segmentId` is given). */
  async find(teamId: string, idOrEmail: string, segmentId?: string): Promise<Contact> {
    const key = contactIdentifier(idOrEmail);
    const contact = 'id' in key ? await this.contacts.getById(teamId, key.id) : await this.contacts.getByEmail(teamId, key.email);
    if (!contact || (segmentId && !(await this.contacts.segmentIdsOf(teamId, contact.id)).includes(segmentId))) throw contactNotFound();
    return contact;
  }

  async checkSegments(teamId: string, ids: string[], field: string, tx?: Transaction): Promise<void> {
    const existing = await this.segments.existing(teamId, ids, tx);
    const index = ids.findIndex((id) => !existing.has(id));
    if (index >= 0) {
      const name = field === 'segments' ? `segments[${index}].id` : field;
      throw field === 'audience_id'
        ? new HeraldError('not_found', 'Segment not found')
        : invalid(`The \`${name}\` field names no segment of this team.`);
    }
  }

  async checkTopics(teamId: string, ids: string[], field = 'topics', tx?: Transaction): Promise<void> {
    if (!ids.length) return;
    const known = new Set((await this.topics.all(teamId, tx)).map((t) => t.id));
    const index = ids.findIndex((id) => !known.has(id));
    if (index >= 0) throw invalid(`The \`${field}[${index}].id\` field names no topic of this team.`);
  }
}
