import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { emailEvent, type EmailEventRecord, type TrackingFlags } from './email-events';
import { EmailEventsRepository } from './email-events.repository';
import { toFacts, type EmailRow } from './email.row';

/** One open (the pixel was fetched) or click (a tracked link was followed) of one recipient. */
export interface EngagementHit {
  /** The hit's own id, drawn when it arrived: the event's id derives from it, so recording a hit twice stores it once. */
  id: string;
  kind: 'open' | 'click';
  emailId: string;
  /** The recipient's position in the email. */
  position: number;
  /** A click's link: its index in the html and its target. */
  link: { index: number; url: string } | null;
  ipAddress: string;
  userAgent: string;
  at: Date;
  machine: boolean;
  reason: TrackingFlags['reason'];
}

/** What recording hits did: the events that were new, and every recorded hit's event as stored (one recorded before keeps its flags). */
export interface EngagementRecorded {
  fresh: EmailEventRecord[];
  events: EmailEventRecord[];
}

type HitRow = Pick<EmailRow, 'id' | 'team_id' | 'region' | 'from_address' | 'subject' | 'message_id' | 'tags' | 'headers' | 'created_at'> & {
  position: number;
  address: string;
};

/**
 * Opens and clicks as email events (`email.opened`, `email.clicked`), in one transaction per
 * group of hits: the first of each (email, recipient, kind, link, machine or not) is claimed in
 * email_engagement_firsts (ON CONFLICT, so two hits racing get one first), the events are
 * stored in the outbox, and last_event follows. A hit of an email or recipient that is not (or
 * no longer) on record records nothing.
 */
@Injectable()
export class EngagementRepository {
  constructor(
    private readonly planes: EmailPlanes,
    private readonly events: EmailEventsRepository,
  ) {}

  /**
   * Records the hits (`published`: see EmailEventsRepository.insert). Answers the events that were
   * new (for the outbox to publish) and every recorded hit's event. Each hit is recorded in its
   * email's region's email plane (a transaction per region the hits' emails are in).
   */
  async record(hits: EngagementHit[], published = false): Promise<EngagementRecorded> {
    if (!hits.length) return { fresh: [], events: [] };
    const recorded = { fresh: [] as EmailEventRecord[], events: [] as EmailEventRecord[] };
    for (const group of await this.planes.byId([...new Set(hits.map((h) => h.emailId))])) {
      const ids = new Set(group.ids);
      const { fresh, events } = await this.recordIn(
        group.db,
        hits.filter((h) => ids.has(h.emailId)),
        published,
      );
      recorded.fresh.push(...fresh);
      recorded.events.push(...events);
    }
    return recorded;
  }

  private recordIn(db: DataSource, hits: EngagementHit[], published: boolean): Promise<EngagementRecorded> {
    return db.transaction(async (m) => {
      // Each recipient once: many hits of one message are usually of few recipients.
      const recipients = [...new Map(hits.map((h) => [`${h.emailId}/${h.position}`, h])).values()];
      const rows: HitRow[] = await m.query(
        `SELECT e.id, e.team_id, e.region, e.from_address, e.subject, e.message_id, e.tags, e.headers, e.created_at,
                r.position, r.address
           FROM unnest($1::uuid[], $2::int[]) AS u(email_id, position)
           JOIN emails e ON e.id = u.email_id
           JOIN email_recipients r ON r.email_id = u.email_id AND r.position = u.position`,
        [recipients.map((h) => h.emailId), recipients.map((h) => h.position)],
      );
      const known = new Map(rows.map((r) => [`${r.id}/${r.position}`, r]));
      const kept = hits.filter((h) => known.has(`${h.emailId}/${h.position}`));
      if (!kept.length) return { fresh: [], events: [] };
      const keys = [
        kept.map((h) => h.emailId),
        kept.map((h) => h.position),
        kept.map((h) => h.kind),
        kept.map((h) => h.link?.index ?? 0),
        kept.map((h) => h.machine),
      ];
      // A hit is unique when it claims its first here. A retried hit that had claimed it before
      // is not told so, but its event is stored already (same id) and keeps the flag it was stored with.
      const claimed: { hit_id: string }[] = await m.query(
        `INSERT INTO email_engagement_firsts (email_id, position, kind, link, machine, hit_id, at)
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::boolean[], $6::uuid[], $7::timestamptz[])
         ON CONFLICT DO NOTHING
         RETURNING hit_id`,
        [...keys, kept.map((h) => h.id), kept.map((h) => h.at.toISOString())],
      );
      const firsts = new Set(claimed.map((c) => c.hit_id));
      const events = kept.map((h) => {
        const row = known.get(`${h.emailId}/${h.position}`)!;
        const tracking: TrackingFlags = {
          machine: h.machine,
          reason: h.reason,
          unique: firsts.has(h.id),
        };
        const source = { ipAddress: h.ipAddress, userAgent: h.userAgent, timestamp: h.at.toISOString() };
        return h.kind === 'open'
          ? emailEvent('email.opened', toFacts(row), [row.address], h.at, h.id, { open: source, tracking })
          : emailEvent('email.clicked', toFacts(row), [row.address], h.at, h.id, { click: { ...source, link: h.link!.url }, tracking });
      });
      const fresh = await this.events.insert(m, events, published);
      await this.events.settleLastEvents(m, fresh);
      if (fresh.length === events.length) return { fresh, events };
      // Hits recorded before (a redelivered message): their events as stored, with the flags they got then.
      const freshIds = new Set(fresh.map((e) => e.id));
      const repeated = await this.events.stored(
        m,
        events.filter((e) => !freshIds.has(e.id)).map((e) => e.id),
      );
      return { fresh, events: [...fresh, ...repeated] };
    });
  }
}
