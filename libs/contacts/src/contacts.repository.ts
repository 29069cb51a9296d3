import { Injectable } from '@nestjs/common';
import { managerOf, NamedStatement, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import { returnedRows } from './returned-rows';
import type { Contact, ContactListPage, ContactWithSegments, PropertyValue, TopicSubscription } from './contact.types';

interface ContactRow {
  id: string;
  team_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  properties: Record<string, PropertyValue> | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, team_id, email, first_name, last_name, unsubscribed, properties, created_at, updated_at';
/** ISO 8601 in UTC to the millisecond, as `Date.toISOString` (both truncate the microseconds). */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** `contactEventData` (contact-events.ts) of the row `c` with its `segment_ids`, in SQL. */
export const CONTACT_EVENT_DATA_SQL = `jsonb_build_object(
  'id', c.id, 'audience_id', c.segment_ids[1], 'segment_ids', to_jsonb(c.segment_ids),
  'created_at', ${iso('c.created_at')}, 'updated_at', ${iso('c.updated_at')},
  'email', c.email, 'first_name', c.first_name, 'last_name', c.last_name, 'unsubscribed', c.unsubscribed)`;
/**
 * A page of a segment's members, as a broadcast's fan-out reads them: only what it uses (no
 * timestamps to parse, 1,000 rows a page), prepared once per connection. The first page and the
 * ones after a contact are two statements: a prepared `$3 IS NULL OR id > $3` would get a generic
 * plan that cannot start its scans at the cursor, and each page would read every one before it.
 */
const segmentMembersPage = (name: string, after: string) =>
  NamedStatement.of(
    name,
    `SELECT c.id, c.email, c.first_name, c.last_name, c.unsubscribed, c.properties, ct.subscription
       FROM segment_contacts sc
       JOIN contacts c ON c.id = sc.contact_id
       LEFT JOIN contact_topics ct ON ct.contact_id = sc.contact_id AND ct.topic_id = $3
      WHERE sc.segment_id = $2 AND sc.team_id = $1 ${after}
      ORDER BY sc.contact_id
      LIMIT $4`,
  );
const SEGMENT_MEMBERS_FIRST = segmentMembersPage('segment_members_first', '');
const SEGMENT_MEMBERS_AFTER = segmentMembersPage('segment_members_after', 'AND sc.contact_id > $5::uuid AND c.id > $5::uuid');

/** A segment member as segmentMembers reads it: the contact's own fields and its subscription to the topic asked about. */
export type SegmentMemberRow = NewContact & { subscription: TopicSubscription | null };

const C_COLUMNS = COLUMNS.split(', ')
  .map((c) => `c.${c}`)
  .join(', ');

/** What a new contact is made of; `email` lowercased. */
export interface NewContact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  unsubscribed: boolean;
  properties: Record<string, PropertyValue>;
}

/** A change of a contact: absent fields are kept; a property set to null is removed. */
export interface ContactPatch {
  firstName?: string | null;
  lastName?: string | null;
  unsubscribed?: boolean;
  properties?: Record<string, PropertyValue | null>;
}

/** One click's unsubscribe (unsubscribeRecordingEvent): prepared, as it runs once per click at a broadcast's peak. */
const UNSUBSCRIBE_RECORDING_EVENT = NamedStatement.of(
  'unsubscribe_contact_recording_event',
  `WITH c AS (
     UPDATE contacts SET unsubscribed = true, updated_at = now() WHERE team_id = $1 AND id = $2 AND NOT unsubscribed
     RETURNING ${COLUMNS}, ARRAY(SELECT s.segment_id::text FROM segment_contacts s WHERE s.team_id = $1 AND s.contact_id = $2
                                   ORDER BY s.created_at, s.segment_id) AS segment_ids
   ), e AS (
     INSERT INTO resource_events (id, team_id, region, type, data, created_at)
     SELECT $3, c.team_id, $4, 'contact.updated', ${CONTACT_EVENT_DATA_SQL}, $5 FROM c
     RETURNING data
   )
   SELECT c.*, e.data AS event_data FROM c CROSS JOIN e`,
);

/**
 * A team's contacts, their segment memberships and their topic subscriptions. Every method
 * takes the team first; the writes take the transaction their events are recorded in.
 */
@Injectable()
export class ContactsRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Inserts the contact unless the team has one at that address already (then answers null). */
  async insert(teamId: string, contact: NewContact, tx?: Transaction): Promise<Contact | null> {
    const rows: ContactRow[] = await managerOf(this.db, tx).query(
      `INSERT INTO contacts (id, team_id, email, first_name, last_name, unsubscribed, properties)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
       ON CONFLICT (team_id, email) DO NOTHING RETURNING ${COLUMNS}`,
      [contact.id, teamId, contact.email, contact.firstName, contact.lastName, contact.unsubscribed, JSON.stringify(contact.properties)],
    );
    return rows.length ? toContact(rows[0]) : null;
  }

  async getById(teamId: string, id: string, tx?: Transaction): Promise<Contact | null> {
    const rows: ContactRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM contacts WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toContact(rows[0]) : null;
  }

  async getByEmail(teamId: string, email: string, tx?: Transaction): Promise<Contact | null> {
    const rows: ContactRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM contacts WHERE team_id = $1 AND email = $2`, [
      teamId,
      email,
    ]);
    return rows.length ? toContact(rows[0]) : null;
  }

  /** Locks and answers the contact (by id or by address) for a change in `tx`. */
  async lock(teamId: string, key: { id: string } | { email: string }, tx: Transaction): Promise<Contact | null> {
    const [column, value] = 'id' in key ? ['id', key.id] : ['email', key.email];
    const rows: ContactRow[] = await managerOf(this.db, tx).query(
      `SELECT ${COLUMNS} FROM contacts WHERE team_id = $1 AND ${column} = $2 FOR UPDATE`,
      [teamId, value],
    );
    return rows.length ? toContact(rows[0]) : null;
  }

  /**
   * Sets `unsubscribed` where it differs, in one statement (the row locked by the UPDATE itself):
   * the contact as it now is, with its segments; null when there is no such contact or it was in
   * that state already (the caller looks again under a lock).
   */
  async setUnsubscribedIfChanged(teamId: string, id: string, unsubscribed: boolean, tx: Transaction): Promise<ContactWithSegments | null> {
    const rows = returnedRows<ContactRow & { segment_ids: string[] }>(
      await managerOf(this.db, tx).query(
        `UPDATE contacts SET unsubscribed = $3, updated_at = now() WHERE team_id = $1 AND id = $2 AND unsubscribed <> $3
         RETURNING ${COLUMNS}, ARRAY(SELECT s.segment_id::text FROM segment_contacts s WHERE s.team_id = $1 AND s.contact_id = $2
                                       ORDER BY s.created_at, s.segment_id) AS segment_ids`,
        [teamId, id, unsubscribed],
      ),
    );
    return rows.length ? { ...toContact(rows[0]), segmentIds: rows[0].segment_ids } : null;
  }

  /**
   * Unsubscribes the contact and records its `contact.updated` in the resource event outbox, in
   * one statement and so one commit, without BEGIN and COMMIT round trips: the one-click
   * unsubscribe's path. The event's `data` is built here, in SQL, as `contactEventData` builds it
   * (contacts.repository.int-spec compares the two), and returned as stored, so what is published
   * now and what the relay would publish later are the same. Null when there is no such contact
   * or it was unsubscribed already: nothing is written (the caller takes the general path).
   */
  async unsubscribeRecordingEvent(
    teamId: string,
    id: string,
    event: { id: string; region: string; createdAt: Date },
  ): Promise<{ contact: ContactWithSegments; data: unknown } | null> {
    const { rows } = await UNSUBSCRIBE_RECORDING_EVENT.run<ContactRow & { segment_ids: string[]; event_data: unknown }>(this.db, [
      teamId,
      id,
      event.id,
      event.region,
      event.createdAt,
    ]);
    if (!rows.length) return null;
    return { contact: { ...toContact(rows[0]), segmentIds: rows[0].segment_ids }, data: rows[0].event_data };
  }

  /** Applies `patch`; answers the contact as it is now, or null when there is none with that id. */
  async update(teamId: string, id: string, patch: ContactPatch, tx?: Transaction): Promise<Contact | null> {
    const sets: string[] = ['updated_at = now()'];
    const params: unknown[] = [teamId, id];
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.firstName !== undefined) set('first_name', patch.firstName);
    if (patch.lastName !== undefined) set('last_name', patch.lastName);
    if (patch.unsubscribed !== undefined) set('unsubscribed', patch.unsubscribed);
    if (patch.properties) {
      const entries = Object.entries(patch.properties);
      const kept = Object.fromEntries(entries.filter(([, v]) => v !== null));
      const removed = entries.filter(([, v]) => v === null).map(([k]) => k);
      params.push(JSON.stringify(kept), removed);
      sets.push(`properties = (properties || $${params.length - 1}::jsonb) - $${params.length}::text[]`);
    }
    const rows = returnedRows<ContactRow>(
      await managerOf(this.db, tx).query(`UPDATE contacts SET ${sets.join(', ')} WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, params),
    );
    return rows.length ? toContact(rows[0]) : null;
  }

  async delete(teamId: string, id: string, tx?: Transaction): Promise<boolean> {
    const result: unknown = await managerOf(this.db, tx).query(`DELETE FROM contacts WHERE team_id = $1 AND id = $2 RETURNING id`, [teamId, id]);
    const rows = Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as unknown[]) : [];
    return rows.length > 0;
  }

  /** Drops a deleted property's values from every contact of the team. */
  async dropProperty(teamId: string, key: string, tx?: Transaction): Promise<void> {
    await managerOf(this.db, tx).query(`UPDATE contacts SET properties = properties - $2::text WHERE team_id = $1 AND properties ? $2`, [
      teamId,
      key,
    ]);
  }

  /** The contact and the ids of its segments, as events describe it. */
  async withSegments(teamId: string, contact: Contact, tx?: Transaction): Promise<ContactWithSegments> {
    return { ...contact, segmentIds: await this.segmentIdsOf(teamId, contact.id, tx) };
  }

  async segmentIdsOf(teamId: string, contactId: string, tx?: Transaction): Promise<string[]> {
    const rows: { segment_id: string }[] = await managerOf(this.db, tx).query(
      `SELECT segment_id FROM segment_contacts WHERE team_id = $1 AND contact_id = $2 ORDER BY created_at, segment_id`,
      [teamId, contactId],
    );
    return rows.map((r) => r.segment_id);
  }

  /** Adds the contact to the segments (both the team's, checked by the caller); answers whether any was new. */
  async addToSegments(teamId: string, contactId: string, segmentIds: string[], tx?: Transaction): Promise<boolean> {
    if (!segmentIds.length) return false;
    const rows: unknown[] = await managerOf(this.db, tx).query(
      `INSERT INTO segment_contacts (segment_id, contact_id, team_id) SELECT s, $2, $1 FROM unnest($3::uuid[]) AS s
       ON CONFLICT DO NOTHING RETURNING segment_id`,
      [teamId, contactId, segmentIds],
    );
    return rows.length > 0;
  }

  async removeFromSegment(teamId: string, contactId: string, segmentId: string, tx?: Transaction): Promise<boolean> {
    const result: unknown = await managerOf(this.db, tx).query(
      `DELETE FROM segment_contacts WHERE team_id = $1 AND contact_id = $2 AND segment_id = $3 RETURNING segment_id`,
      [teamId, contactId, segmentId],
    );
    const rows = Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as unknown[]) : [];
    return rows.length > 0;
  }

  /** Sets the contact's subscription to each topic (the team's, checked by the caller). */
  async setSubscriptions(
    teamId: string,
    contactId: string,
    topics: { id: string; subscription: TopicSubscription }[],
    tx?: Transaction,
  ): Promise<void> {
    if (!topics.length) return;
    await managerOf(this.db, tx).query(
      `INSERT INTO contact_topics (contact_id, topic_id, team_id, subscription)
       SELECT $2, t.id, $1, t.subscription FROM unnest($3::uuid[], $4::text[]) AS t(id, subscription)
       ON CONFLICT (contact_id, topic_id) DO UPDATE SET subscription = excluded.subscription, updated_at = now()`,
      [teamId, contactId, topics.map((t) => t.id), topics.map((t) => t.subscription)],
    );
  }

  /**
   * A page of the team's contacts, newest first, by the (created_at, id) keyset; narrowed to a
   * segment's members and to a search of the address when asked.
   */
  async listPage(teamId: string, page: ContactListPage): Promise<{ items: Contact[]; hasMore: boolean }> {
    const params: unknown[] = [teamId, page.limit + 1];
    const conditions = ['c.team_id = $1'];
    if (page.segmentId) {
      params.push(page.segmentId);
      conditions.push(`EXISTS (SELECT 1 FROM segment_contacts sc WHERE sc.segment_id = $${params.length} AND sc.contact_id = c.id)`);
    }
    if (page.search) {
      params.push(searchPattern(page.search));
      conditions.push(`c.email LIKE $${params.length}`);
    }
    const cursor = page.after ?? page.before;
    if (cursor) {
      params.push(cursor);
      conditions.push(
        `(c.created_at, c.id) ${page.before ? '>' : '<'} (SELECT created_at, id FROM contacts WHERE team_id = $1 AND id = $${params.length})`,
      );
    }
    const order = page.before ? 'c.created_at, c.id' : 'c.created_at DESC, c.id DESC';
    const rows: ContactRow[] = await this.db.query(
      `SELECT ${C_COLUMNS} FROM contacts c WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT $2`,
      params,
    );
    const kept = rows.slice(0, page.limit);
    return { items: (page.before ? kept.reverse() : kept).map(toContact), hasMore: rows.length > page.limit };
  }

  /**
   * Members of a segment in contact id order, after `afterContactId`, with their subscription to
   * `topicId` (explicit rows only). The keyset is stated on both tables: the
   * planner merges the two primary-key scans, and without its own bound the contacts scan
   * started at the team's first contact, so each page cost as much as all the pages before it.
   */
  async segmentMembers(
    teamId: string,
    segmentId: string,
    afterContactId: string | null,
    limit: number,
    topicId: string | null,
  ): Promise<SegmentMemberRow[]> {
    const statement = afterContactId === null ? SEGMENT_MEMBERS_FIRST : SEGMENT_MEMBERS_AFTER;
    const { rows } = await statement.run<
      Pick<ContactRow, 'id' | 'email' | 'first_name' | 'last_name' | 'unsubscribed' | 'properties'> & { subscription: TopicSubscription | null }
    >(this.db, afterContactId === null ? [teamId, segmentId, topicId, limit] : [teamId, segmentId, topicId, limit, afterContactId]);
    return rows.map((row) => ({
      id: row.id,
      email: row.email,
      firstName: row.first_name,
      lastName: row.last_name,
      unsubscribed: row.unsubscribed,
      properties: row.properties ?? {},
      subscription: row.subscription,
    }));
  }

  /**
   * The segment's members a broadcast would write to: not unsubscribed, and with a topic,
   * subscribed to it (their own choice, else `topicDefault`). Suppressed addresses are not known here.
   */
  async countSendable(teamId: string, segmentId: string, topic: { id: string; defaultSubscription: TopicSubscription } | null): Promise<number> {
    const rows: { n: string }[] = await this.db.query(
      `SELECT count(*) AS n
         FROM segment_contacts sc
         JOIN contacts c ON c.id = sc.contact_id
         LEFT JOIN contact_topics ct ON ct.contact_id = sc.contact_id AND ct.topic_id = $3
        WHERE sc.team_id = $1 AND sc.segment_id = $2 AND NOT c.unsubscribed
          AND ($3::uuid IS NULL OR coalesce(ct.subscription, $4) = 'opt_in')`,
      [teamId, segmentId, topic?.id ?? null, topic?.defaultSubscription ?? null],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async countSegmentMembers(teamId: string, segmentId: string): Promise<number> {
    const rows: { n: string }[] = await this.db.query(`SELECT count(*) AS n FROM segment_contacts WHERE team_id = $1 AND segment_id = $2`, [
      teamId,
      segmentId,
    ]);
    return Number(rows[0]?.n ?? 0);
  }

  /** The contact's explicit topic choices, by topic id. */
  async subscriptionsOf(teamId: string, contactId: string, tx?: Transaction): Promise<Map<string, TopicSubscription>> {
    const rows: { topic_id: string; subscription: TopicSubscription }[] = await managerOf(this.db, tx).query(
      `SELECT topic_id, subscription FROM contact_topics WHERE team_id = $1 AND contact_id = $2`,
      [teamId, contactId],
    );
    return new Map(rows.map((r) => [r.topic_id, r.subscription]));
  }

  async teamHomeRegion(teamId: string, tx?: Transaction): Promise<string | null> {
    const rows: { home_region: string }[] = await managerOf(this.db, tx).query(`SELECT home_region FROM teams WHERE id = $1`, [teamId]);
    return rows[0]?.home_region ?? null;
  }
}

/** A LIKE pattern for `search` (lowercased): the start of an address, or any part of it from 3 characters. */
export function searchPattern(search: string): string {
  const literal = search.toLowerCase().replace(/[\\%_]/g, '\\$&');
  return search.length >= 3 ? `%${literal}%` : `${literal}%`;
}

export function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    teamId: row.team_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    unsubscribed: row.unsubscribed,
    properties: row.properties ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
