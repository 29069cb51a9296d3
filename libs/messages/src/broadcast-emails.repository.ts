import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes, type PageRequest } from '@herald/database';
import type { EmailEventType } from './email-events';

/** The events a broadcast's recipients are listed by (Resend's `type`, less `unsubscribed`, which is the broadcast's own record). */
export type BroadcastEmailEvent = 'sent' | 'delivered' | 'opened' | 'clicked' | 'bounced' | 'complained' | 'suppressed';

export interface BroadcastEmailFilter {
  event: BroadcastEmailEvent;
  /** An exact recipient address (any case). */
  email?: string;
  /** Only bounces of this type (`email.bounced`'s `bounce.type`, lowercased). */
  bounceType?: string;
}

/** One email of a broadcast (one recipient each) that had the event: how many times, and for clicks, which links. */
export interface BroadcastEmailHit {
  emailId: string;
  address: string;
  count: number;
  /** The type of its (first) bounce, lowercased; null for other events. */
  bounceType: string | null;
  /** Clicks of each link, most clicked first; empty for other events. */
  links: { url: string; clicks: number }[];
}

export interface ClickedLink {
  url: string;
  clicks: number;
  /** Recipients who clicked it (each broadcast email has one). */
  uniqueClicks: number;
}

/**
 * A broadcast's emails as the broadcasts context reads them: which recipients had an event,
 * the addresses of given emails, and the links clicked. Keyset pages by email id (UUID v7, so
 * newest first); every method takes the team first. A broadcast's emails are all in its region's
 * email plane (EmailPlanes), the one asked.
 */
@Injectable()
export class BroadcastEmailsRepository {
  constructor(private readonly planes: EmailPlanes) {}

  /** How many of the broadcast's emails are at each `last_event`. */
  async lastEventCounts(teamId: string, broadcastId: string): Promise<Record<string, number>> {
    const rows: { last_event: string; n: number }[] = await (
      await this.holding(teamId, broadcastId)
    ).query(`SELECT last_event, count(*)::int AS n FROM emails WHERE team_id = $1 AND broadcast_id = $2 GROUP BY last_event`, [teamId, broadcastId]);
    return Object.fromEntries(rows.map((r) => [r.last_event, r.n]));
  }

  async withEvent(
    teamId: string,
    broadcastId: string,
    filter: BroadcastEmailFilter,
    page: PageRequest,
  ): Promise<{ items: BroadcastEmailHit[]; hasMore: boolean }> {
    const type = `email.${filter.event}` as EmailEventType;
    const params: unknown[] = [teamId, broadcastId, type, page.limit + 1];
    const where = ['e.team_id = $1', 'e.broadcast_id = $2'];
    const add = (sql: (n: number) => string, value: unknown) => where.push(sql(params.push(value)));
    if (filter.email) add((n) => `lower(r.address) = $${n}`, filter.email.toLowerCase());
    const cursor = page.after ?? page.before;
    if (cursor) add((n) => `e.id ${page.before ? '>' : '<'} $${n}`, cursor);
    const having = filter.bounceType ? `HAVING lower(min(v.data->'bounce'->>'type')) = $${params.push(filter.bounceType)}` : '';
    const db = await this.holding(teamId, broadcastId);
    const rows: { id: string; address: string; n: number; bounce_type: string | null }[] = await db.query(
      `SELECT e.id, r.address, count(*)::int AS n, lower(min(v.data->'bounce'->>'type')) AS bounce_type
         FROM emails e
         JOIN email_recipients r ON r.email_id = e.id AND r.position = 0
         JOIN email_events v ON v.email_id = e.id AND v.type = $3
        WHERE ${where.join(' AND ')}
        GROUP BY e.id, r.address ${having}
        ORDER BY e.id ${page.before ? 'ASC' : 'DESC'} LIMIT $4`,
      params,
    );
    const kept = rows.slice(0, page.limit);
    if (page.before) kept.reverse();
    const links =
      filter.event === 'clicked'
        ? await this.linksOf(
            db,
            kept.map((r) => r.id),
          )
        : new Map<string, BroadcastEmailHit['links']>();
    return {
      items: kept.map((r) => ({ emailId: r.id, address: r.address, count: r.n, bounceType: r.bounce_type, links: links.get(r.id) ?? [] })),
      hasMore: rows.length > page.limit,
    };
  }

  /** The recipient address of each of these emails of the team. */
  async addresses(teamId: string, emailIds: string[]): Promise<Map<string, string>> {
    const addresses = new Map<string, string>();
    for (const group of await this.planes.byId(emailIds)) {
      const rows: { id: string; address: string }[] = await group.db.query(
        `SELECT e.id, r.address FROM emails e JOIN email_recipients r ON r.email_id = e.id AND r.position = 0
          WHERE e.team_id = $1 AND e.id = ANY($2::uuid[])`,
        [teamId, group.ids],
      );
      for (const r of rows) addresses.set(r.id, r.address);
    }
    return addresses;
  }

  /** The broadcast's emails to this address (any case). */
  async idsTo(teamId: string, broadcastId: string, address: string): Promise<string[]> {
    const rows: { id: string }[] = await (
      await this.holding(teamId, broadcastId)
    ).query(
      `SELECT e.id FROM emails e JOIN email_recipients r ON r.email_id = e.id AND r.position = 0
        WHERE e.team_id = $1 AND e.broadcast_id = $2 AND lower(r.address) = $3`,
      [teamId, broadcastId, address.toLowerCase()],
    );
    return rows.map((r) => r.id);
  }

  /**
   * The links clicked in the broadcast's emails, by URL: clicks, and recipients who clicked. A
   * page starts after (or ends before) the URL `page.after` (`page.before`) names.
   */
  async clickedLinks(teamId: string, broadcastId: string, page: PageRequest): Promise<{ items: ClickedLink[]; hasMore: boolean }> {
    const params: unknown[] = [teamId, broadcastId, page.limit + 1];
    const cursor = page.after ?? page.before;
    const from = cursor ? `AND v.data->'click'->>'link' ${page.before ? '<' : '>'} $${params.push(cursor)}` : '';
    const rows: { url: string; clicks: number; unique_clicks: number }[] = await (
      await this.holding(teamId, broadcastId)
    ).query(
      `SELECT v.data->'click'->>'link' AS url, count(*)::int AS clicks, count(DISTINCT v.email_id)::int AS unique_clicks
         FROM emails e JOIN email_events v ON v.email_id = e.id AND v.type = 'email.clicked'
        WHERE e.team_id = $1 AND e.broadcast_id = $2 ${from}
        GROUP BY 1
        ORDER BY 1 ${page.before ? 'DESC' : 'ASC'} LIMIT $3`,
      params,
    );
    const kept = rows.slice(0, page.limit);
    if (page.before) kept.reverse();
    return { items: kept.map((r) => ({ url: r.url, clicks: r.clicks, uniqueClicks: r.unique_clicks })), hasMore: rows.length > page.limit };
  }

  private async linksOf(db: DataSource, emailIds: string[]): Promise<Map<string, BroadcastEmailHit['links']>> {
    if (!emailIds.length) return new Map();
    const rows: { email_id: string; url: string; clicks: number }[] = await db.query(
      `SELECT email_id, data->'click'->>'link' AS url, count(*)::int AS clicks
         FROM email_events WHERE email_id = ANY($1::uuid[]) AND type = 'email.clicked'
        GROUP BY 1, 2 ORDER BY 3 DESC, 2`,
      [emailIds],
    );
    const links = new Map<string, BroadcastEmailHit['links']>();
    for (const r of rows) links.set(r.email_id, [...(links.get(r.email_id) ?? []), { url: r.url, clicks: r.clicks }]);
    return links;
  }

  /** The email plane holding the broadcast's emails: its region's. */
  private holding(teamId: string, broadcastId: string): Promise<DataSource> {
    return this.planes.holding(async (db) => {
      const found: unknown[] = await db.query(`SELECT 1 FROM emails WHERE team_id = $1 AND broadcast_id = $2 LIMIT 1`, [teamId, broadcastId]);
      return found.length > 0;
    });
  }
}
