import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  EmailPlanes,
  KEYSET_MICROSECONDS,
  isPostgresUnreachable,
  keysetCursor,
  mergeKeysetPages,
  pastKeysetCursor,
  type Keyed,
  type PageRequest,
} from '@herald/database';

/** The sending domain of `from_address` (`Name <a@b>` or `a@b`); the same expression as the emails_team_from_domain_idx index. */
const FROM_DOMAIN_SQL = `lower(substring(from_address from '@([^@<>[:space:]]+)>?[[:space:]]*$'))`;

export interface EmailFeedFilter {
  lastEvent?: string;
  /** The sending domain's name, lowercased. */
  fromDomain?: string;
  /** The API key that sent it (emails_team_api_key_idx). */
  apiKeyId?: string;
  since?: Date;
  until?: Date;
  /** An exact recipient address. */
  recipient?: string;
  /** Words of the subject, all present; the last one may be a prefix. */
  words?: string[];
}

export interface EmailFeedItem {
  id: string;
  from: string;
  to: string[];
  subject: string;
  lastEvent: string;
  createdAt: Date;
  domainId: string | null;
  apiKeyId: string | null;
}

export interface EmailRecipientState {
  address: string;
  kind: string;
  status: string;
  attempts: number;
  lastResponse: string | null;
  updatedAt: Date | null;
}

export interface EmailTimelineEvent {
  id: string;
  type: string;
  recipients: string[];
  data: Record<string, unknown>;
  createdAt: Date;
}

/** A recipient of one of the team's earlier emails that bounced: what an insight about the address reads. */
/** A feed row as one database answers it, before its domain's id is found. */
type FeedRow = Omit<EmailFeedItem, 'domainId'> & { fromDomain: string | null } & Keyed;

export interface EarlierBounce {
  address: string;
  at: Date;
  detail: string | null;
}

/**
 * The dashboard's reading of a team's emails: the filtered feed, newest first by the same
 * (created_at, id) keyset as GET /emails, across every region's email plane, and an email's
 * recipients, events and stored MIME, in its region's. Every method takes the team first.
 */
@Injectable()
export class EmailFeedRepository {
  constructor(
    private readonly planes: EmailPlanes,
    /** The control plane, for the domains. */
    private readonly control: DataSource,
  ) {}

  /**
   * A page of the feed. With several databases, one that cannot be reached is left out rather
   * than failing the page: its regions are named in `unavailableRegions`, for the dashboard to
   * say whose emails are missing (GET /emails answers 503 instead: an API client paging through
   * would skip them without knowing). The database holding the cursor's email must answer.
   */
  async list(
    teamId: string,
    filter: EmailFeedFilter,
    page: PageRequest,
  ): Promise<{ items: EmailFeedItem[]; hasMore: boolean; unavailableRegions: string[] }> {
    const planes = this.planes.all();
    const merged = planes.length > 1;
    const cursor = page.after ?? page.before;
    // Several databases: the cursor's created_at is read where its email is, and given to each (mergedKeysetPage).
    const at = cursor && merged ? await keysetCursor(await this.planes.ofId(cursor), 'emails', teamId, cursor) : null;
    if (cursor && merged && at === null) return { items: [], hasMore: false, unavailableRegions: [] };
    const unavailableRegions: string[] = [];
    const failures: unknown[] = [];
    const pages = await Promise.all(
      planes.map(async ({ regions, db }) => {
        try {
          return await this.page(await db, teamId, filter, page, merged ? { at } : null);
        } catch (error) {
          if (!merged || !isPostgresUnreachable(error)) throw error;
          unavailableRegions.push(...regions);
          failures.push(error);
          return [];
        }
      }),
    );
    // No database answered: nothing to show but the error.
    if (failures.length === planes.length) throw failures[0];
    const { rows, hasMore } = mergeKeysetPages(pages, page);
    const domainIds = await this.domainIds(
      teamId,
      rows.map((r) => r.fromDomain),
    );
    const items = rows.map(({ fromDomain, ...item }) => ({ ...item, domainId: (fromDomain && domainIds.get(fromDomain)) ?? null }));
    return { items, hasMore, unavailableRegions };
  }

  /**
   * One database's `limit + 1` feed rows past the cursor, in page order. `merged`: the page is one
   * of several, so the cursor is given by its created_at (`at`) and each row carries its keyset_us.
   */
  private page(db: DataSource, teamId: string, filter: EmailFeedFilter, page: PageRequest, merged: { at: string | null } | null): Promise<FeedRow[]> {
    const params: unknown[] = [teamId, page.limit + 1];
    const where = ['e.team_id = $1'];
    const add = (sql: (n: number) => string, value: unknown) => where.push(sql(params.push(value)));
    if (filter.lastEvent) add((n) => `e.last_event = $${n}`, filter.lastEvent);
    if (filter.fromDomain) add((n) => `${FROM_DOMAIN_SQL.replace('from_address', 'e.from_address')} = $${n}`, filter.fromDomain);
    if (filter.apiKeyId) add((n) => `e.api_key_id = $${n}`, filter.apiKeyId);
    if (filter.since) add((n) => `e.created_at >= $${n}`, filter.since);
    if (filter.until) add((n) => `e.created_at < $${n}`, filter.until);
    if (filter.recipient) add((n) => `e.id IN (SELECT email_id FROM email_recipients WHERE lower(address) = $${n})`, filter.recipient.toLowerCase());
    if (filter.words?.length) add((n) => `to_tsvector('simple', e.subject) @@ to_tsquery('simple', $${n})`, tsQuery(filter.words));
    const cursor = page.after ?? page.before;
    if (cursor && merged?.at) {
      const id = `$${params.push(cursor)}`;
      where.push(pastKeysetCursor(page, `$${params.push(merged.at)}`, id, 'e.'));
    } else if (cursor) {
      add((n) => `(e.created_at, e.id) ${page.before ? '>' : '<'} (SELECT created_at, id FROM emails WHERE team_id = $1 AND id = $${n})`, cursor);
    }
    const order = page.before ? 'e.created_at, e.id' : 'e.created_at DESC, e.id DESC';
    return db.query(
      `SELECT e.id, e.from_address AS "from", e.to_addresses AS "to", e.subject, e.last_event AS "lastEvent", e.created_at AS "createdAt",
              e.api_key_id AS "apiKeyId", ${FROM_DOMAIN_SQL.replace('from_address', 'e.from_address')} AS "fromDomain"
              ${merged ? `, ${KEYSET_MICROSECONDS} AS keyset_us` : `, '0' AS keyset_us`}
         FROM emails e WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $2`,
      params,
    );
  }

  /**
   * The ids of the team's domains of these names (lowercase), in a statement of its own: domains
   * are the control plane, which will not share a database with the emails (issue 15).
   */
  private async domainIds(teamId: string, names: (string | null)[]): Promise<Map<string, string>> {
    const wanted = [...new Set(names.filter((n): n is string => n !== null))];
    if (wanted.length === 0) return new Map();
    const rows: { id: string; name: string }[] = await this.control.query(
      `SELECT id, lower(name) AS name FROM domains WHERE team_id = $1 AND lower(name) = ANY($2::text[])`,
      [teamId, wanted],
    );
    return new Map(rows.map((r) => [r.name, r.id]));
  }

  async recipients(teamId: string, emailId: string): Promise<EmailRecipientState[]> {
    return (await this.planes.ofId(emailId)).query(
      `SELECT r.address, r.kind, r.status, r.attempts, r.last_response AS "lastResponse", r.updated_at AS "updatedAt"
         FROM email_recipients r JOIN emails e ON e.id = r.email_id
        WHERE e.team_id = $1 AND r.email_id = $2 ORDER BY r.position`,
      [teamId, emailId],
    );
  }

  async events(teamId: string, emailId: string): Promise<EmailTimelineEvent[]> {
    return (await this.planes.ofId(emailId)).query(
      `SELECT id, type, recipients, data, created_at AS "createdAt" FROM email_events WHERE team_id = $1 AND email_id = $2 ORDER BY created_at, id`,
      [teamId, emailId],
    );
  }

  /**
   * The team's recipients among these (lowercased) addresses that bounced before `before`, newest
   * first, leaving out the addresses in `except`.
   */
  async bouncedBefore(teamId: string, addresses: string[], before: Date, except: string[], limit: number): Promise<EarlierBounce[]> {
    if (!addresses.length) return [];
    const found = await Promise.all(this.planes.all().map(async ({ db }) => this.bouncedIn(await db, teamId, addresses, before, except, limit)));
    return found
      .flat()
      .sort((a, b) => b.at.getTime() - a.at.getTime())
      .slice(0, limit);
  }

  private bouncedIn(db: DataSource, teamId: string, addresses: string[], before: Date, except: string[], limit: number): Promise<EarlierBounce[]> {
    return db.query(
      `SELECT lower(r.address) AS address, r.updated_at AS at, r.last_response AS detail
         FROM email_recipients r JOIN emails e ON e.id = r.email_id
        WHERE lower(r.address) = ANY($2::text[]) AND lower(r.address) <> ALL($4::text[])
          AND e.team_id = $1 AND r.status = 'bounced' AND r.updated_at < $3
        ORDER BY r.updated_at DESC LIMIT $5`,
      [teamId, addresses, before, except, limit],
    );
  }

  /** The MIME as it was submitted (SMTP relay), or null for an email sent through the API. */
  async storedMime(teamId: string, emailId: string): Promise<Buffer | null> {
    const rows: { mime: Buffer }[] = await (
      await this.planes.ofId(emailId)
    ).query(`SELECT m.mime FROM email_mime m JOIN emails e ON e.id = m.email_id WHERE e.team_id = $1 AND m.email_id = $2`, [teamId, emailId]);
    return rows[0]?.mime ?? null;
  }
}

/** `['order', 'ship']` → `order & ship:*`: every word, the last one also as a prefix (typing as you search). */
export function tsQuery(words: readonly string[]): string {
  const clean = words.map((w) => w.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')).filter(Boolean);
  return clean.map((w, i) => (i === clean.length - 1 ? `${w}:*` : w)).join(' & ');
}
