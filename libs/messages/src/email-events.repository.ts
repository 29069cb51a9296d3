import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { PublishEntries } from '@herald/outbox';
import { EmailPlanes, NamedStatement } from '@herald/database';
import { jsonbArrayParameter, plainArray, textArrayParameter } from './binary-arrays';
import { lastEventOf, type EmailEventRecord } from './email-events';
import { latestEvents } from './latest-events';

interface EventRow {
  id: string;
  email_id: string;
  team_id: string;
  region: string;
  type: EmailEventRecord['type'];
  recipients: string[];
  data: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = 'id, email_id, team_id, region, type, recipients, data, created_at';

const toRecord = (r: EventRow): EmailEventRecord => ({
  id: r.id,
  emailId: r.email_id,
  teamId: r.team_id,
  region: r.region,
  type: r.type,
  recipients: r.recipients,
  data: r.data,
  createdAt: r.created_at,
});

const INSERT_EVENTS = NamedStatement.of(
  'insert_email_events',
  `INSERT INTO email_events (id, email_id, team_id, region, type, recipients, data, created_at, published_at)
   SELECT u.id, u.email_id, u.team_id, u.region, u.type, ARRAY(SELECT jsonb_array_elements_text(u.recipients)), u.data, u.created_at,
          CASE WHEN $9::boolean THEN now() END
     FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::jsonb[], $8::timestamptz[])
          AS u(id, email_id, team_id, region, type, recipients, data, created_at)
   ON CONFLICT (id) DO NOTHING
   RETURNING id`,
);
/** last_event follows the latest event of each email (the values need no quoting: plainArray). */
const SETTLE_LAST_EVENTS = NamedStatement.of(
  'settle_last_events',
  `UPDATE emails e SET last_event = u.last_event, last_event_at = u.at
     FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS u(id, last_event, at)
    WHERE e.id = u.id AND (e.last_event_at IS NULL OR e.last_event_at <= u.at)`,
);
const MARK_PUBLISHED = NamedStatement.of('mark_email_events_published', `UPDATE email_events SET published_at = now() WHERE id = ANY($1::uuid[])`);

/**
 * email_events: each email's history (for the dashboard) and the outbox of the events stream.
 * An event's id derives from the fact, so inserting it again is a no-op.
 */
@Injectable()
export class EmailEventsRepository {
  constructor(private readonly planes: EmailPlanes) {}

  /**
   * Inserts events in the caller's transaction; returns those that were new (an id seen before is
   * skipped). `published`: the caller puts them on the stream itself before it lets go of their
   * fact (whose own stream redelivers it otherwise), so they are stored as published, out of the relay's way.
   */
  async insert(m: EntityManager, events: EmailEventRecord[], published = false): Promise<EmailEventRecord[]> {
    if (!events.length) return [];
    const { rows: inserted } = await INSERT_EVENTS.run<{ id: string }>(m, [
      plainArray(events.map((e) => e.id)),
      plainArray(events.map((e) => e.emailId)),
      plainArray(events.map((e) => e.teamId)),
      textArrayParameter(events.map((e) => e.region)),
      textArrayParameter(events.map((e) => e.type)),
      jsonbArrayParameter(events.map((e) => JSON.stringify(e.recipients))),
      jsonbArrayParameter(events.map((e) => JSON.stringify(e.data))),
      plainArray(events.map((e) => e.createdAt.toISOString())),
      published,
    ]);
    const fresh = new Set(inserted.map((r) => r.id));
    return events.filter((e) => fresh.has(e.id));
  }

  /** Events as stored, by id (in the caller's transaction). */
  async stored(m: EntityManager, ids: string[]): Promise<EmailEventRecord[]> {
    if (!ids.length) return [];
    const rows: EventRow[] = await m.query(`SELECT ${COLUMNS} FROM email_events WHERE id = ANY($1::uuid[])`, [ids]);
    return rows.map(toRecord);
  }

  /** last_event follows the latest event of each email (an older event arriving late changes nothing). */
  async settleLastEvents(m: EntityManager, events: EmailEventRecord[]): Promise<void> {
    const list = [...latestEvents(events).values()];
    if (!list.length) return;
    await SETTLE_LAST_EVENTS.run(m, [
      plainArray(list.map((e) => e.emailId)),
      plainArray(list.map((e) => lastEventOf(e.type))),
      plainArray(list.map((e) => e.createdAt.toISOString())),
    ]);
  }

  /** Marks events as on the stream, each in its region's email plane (an event's region is its email's). */
  async markPublished(events: readonly { region: string; id: string }[]): Promise<void> {
    const byRegion = new Map<string, string[]>();
    for (const { region, id } of events) {
      const ids = byRegion.get(region);
      if (ids) ids.push(id);
      else byRegion.set(region, [id]);
    }
    for (const [region, ids] of byRegion) await MARK_PUBLISHED.run(await this.planes.of(region), [ids]);
  }

  /**
   * One relay pass: events of the region still unpublished after `olderThanMs` (their publisher
   * died), oldest first, locked while they are published so that concurrent relays take
   * different ones, and marked published in the same transaction.
   */
  async relayDue(
    region: string,
    olderThanMs: number,
    limit: number,
    publish: PublishEntries<EmailEventRecord>,
  ): Promise<{ rows: number; published: number }> {
    return (await this.planes.of(region)).transaction(async (m) => {
      const rows: EventRow[] = await m.query(
        `SELECT ${COLUMNS} FROM email_events
          WHERE region = $1 AND published_at IS NULL AND created_at <= now() - make_interval(secs => $2)
          ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [region, olderThanMs / 1000, limit],
      );
      const due = rows.map(toRecord);
      const acked = await publish(due);
      const ids = due.filter((_, i) => acked[i]).map((e) => e.id);
      if (ids.length) await MARK_PUBLISHED.run(m, [ids]);
      return { rows: due.length, published: ids.length };
    });
  }
}
