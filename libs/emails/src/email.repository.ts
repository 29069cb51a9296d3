import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, HeraldConfig } from '@herald/config';
import { DataSource, EntityManager } from 'typeorm';
import { PageRequest, affectedRows, keysetPage } from '@herald/database';
import { EmailEvent, EmailRecord, EmailSource, EmailSummary } from './email.types';
import type { EmailEventRecord } from '@herald/delivery';
import { ScheduledEmailEvents } from './scheduled-email-events';
import type { NormalizedEmail } from './validation';

/** What the send path writes for one accepted email. */
export interface NewEmail {
  id: string;
  teamId: string;
  region: string;
  source: EmailSource;
  idempotencyKey: string | null;
  /**
   * Its row in the dispatch outbox: one per request and region for emails sent now (see
   * dispatchIdsOf), the email's own id for a scheduled one.
   */
  dispatchId: string;
  email: NormalizedEmail;
  /**
   * SMTP only: the message to send as is (stored in email_mime, DKIM-signed by the worker) and
   * its Message-ID (with angle brackets), the client's or the one Herald wrote into `mime`.
   */
  raw?: { mime: Buffer; messageId: string };
}

interface EmailRow {
  id: string;
  team_id: string;
  region: string;
  source: EmailSource;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[] | null;
  bcc_addresses: string[] | null;
  reply_to: string[] | null;
  subject: string;
  html: string | null;
  text_body: string | null;
  headers: Record<string, string> | null;
  tags: { name: string; value: string }[] | null;
  message_id: string;
  last_event: EmailEvent;
  scheduled_at: Date | null;
  created_at: Date;
}

export interface DueEmail {
  id: string;
  teamId: string;
  region: string;
}

const SUMMARY_COLUMNS = `id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses,
  reply_to, subject, message_id, last_event, scheduled_at, created_at`;

/**
 * Emails and their recipients in Postgres. Every method takes the team first, so a query
 * cannot forget its tenant. The inserts are one statement each (JSON record sets), so a batch of
 * 100 emails costs one round trip.
 */
@Injectable()
export class EmailRepository {
  constructor(
    private readonly db: DataSource,
    @Inject(CONFIG) private readonly config: HeraldConfig,
    private readonly scheduledEvents: ScheduledEmailEvents,
  ) {}

  /**
   * Inserts emails, recipients, attachments, SMTP messages and the emails' dispatch-outbox rows
   * atomically, in one statement; with scheduled emails among them, in one transaction with
   * their `email.scheduled` events. Returns those events, to publish once committed.
   */
  async insert(emails: NewEmail[], manager: EntityManager = this.db.manager): Promise<EmailEventRecord[]> {
    if (!emails.some((e) => e.email.scheduledAt)) {
      await this.insertEmails(emails, manager);
      return [];
    }
    const write = async (m: EntityManager) => {
      await this.insertEmails(emails, m);
      return this.scheduledEvents.record(m, emails);
    };
    return manager.queryRunner?.isTransactionActive ? write(manager) : this.db.transaction(write);
  }

  private async insertEmails(emails: NewEmail[], manager: EntityManager): Promise<void> {
    if (!emails.length) return;
    const params = sendParameters(emails, this.config.DISPATCH_GRACE_SECONDS);
    const more: string[] = [];
    const attachments = emails.flatMap(({ id, email }) =>
      email.attachments.map((a, position) => ({
        email_id: id,
        position,
        filename: a.filename,
        content_type: a.contentType,
        content_id: a.contentId,
        path: a.path,
        content: a.content?.toString('base64') ?? null,
        size: a.size,
      })),
    );
    if (attachments.length) {
      more.push(`attachments_in AS (
         INSERT INTO email_attachments (email_id, position, filename, content_type, content_id, path, content, size)
         SELECT email_id, position, filename, content_type, content_id, path, decode(content, 'base64'), size
         FROM jsonb_to_recordset($${params.push(JSON.stringify(attachments))}::jsonb) AS a(email_id uuid, position smallint,
           filename text, content_type text, content_id text, path text, content text, size integer)
         RETURNING email_id)`);
    }
    // Each MIME is its own parameter: node-postgres sends a Buffer as binary, with no encoding.
    const mimes = emails.flatMap(({ id, raw }) => (raw ? [`($${params.push(id)}::uuid, $${params.push(raw.mime)}::bytea)`] : []));
    if (mimes.length) more.push(`mime_in AS (INSERT INTO email_mime (email_id, mime) VALUES ${mimes.join(', ')} RETURNING email_id)`);
    await manager.query(`${insertSendSql(emails.length)}${more.map((cte) => `, ${cte}`).join('')}\n${INSERT_RECIPIENTS}`, params);
  }

  async get(teamId: string, id: string): Promise<EmailRecord | null> {
    const rows: EmailRow[] = await this.db.query(
      `SELECT ${SUMMARY_COLUMNS}, html, text_body, headers, tags FROM emails WHERE team_id = $1 AND id = $2`,
      [teamId, id],
    );
    return rows.length ? toRecord(rows[0]) : null;
  }

  /** Newest first; `after` pages toward older emails, `before` toward newer (see keysetPage). */
  async list(teamId: string, page: PageRequest): Promise<{ items: EmailSummary[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<EmailRow>(this.db, { table: 'emails', columns: SUMMARY_COLUMNS, teamId }, page);
    return { items: rows.map(toSummary), hasMore };
  }

  /**
   * Moves a scheduled email that has not been dispatched yet (its outbox row, whose id is the
   * email's, is still there).
   * False if it cannot be moved. A reconciler publishing it holds the row: this waits, then finds
   * it gone.
   */
  async reschedule(teamId: string, id: string, scheduledAt: Date): Promise<boolean> {
    const result = await this.db.query(
      `WITH moved AS (
         UPDATE email_dispatches d SET due_at = $3
          WHERE d.id = $2 AND EXISTS (SELECT 1 FROM emails e WHERE e.id = $2 AND e.team_id = $1 AND e.last_event = 'scheduled')
         RETURNING d.id
       )
       UPDATE emails SET scheduled_at = $3 WHERE id IN (SELECT id FROM moved)`,
      [teamId, id, scheduledAt],
    );
    return affectedRows(result) === 1;
  }

  /** Cancels a scheduled email that has not been dispatched yet: its outbox row goes, so it never comes due. */
  async cancel(teamId: string, id: string): Promise<boolean> {
    const result = await this.db.query(
      `WITH dropped AS (
         DELETE FROM email_dispatches d
          WHERE d.id = $2 AND EXISTS (SELECT 1 FROM emails e WHERE e.id = $2 AND e.team_id = $1 AND e.last_event = 'scheduled')
         RETURNING d.id
       )
       UPDATE emails SET last_event = 'canceled' WHERE id IN (SELECT id FROM dropped)`,
      [teamId, id],
    );
    return affectedRows(result) === 1;
  }

  async exists(teamId: string, id: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM emails WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length > 0;
  }
}


/**
 * The send path's insert, as parallel arrays (unnest): Postgres reads them faster than a JSON
 * record set. The header address lists (to, cc, bcc, reply_to) are slices of one flat array
 * ($13), four [first, last] pairs per email in $14. The bodies (html, text) are one parameter
 * each, from $21 on: node-postgres writes a parameter as it is, where an array element of a
 * kilobyte of HTML would be escaped and copied twice. The emails' dispatch-outbox rows ($20 the
 * row of each email) list them, due after the grace period ($19) or at their scheduled time.
 */
function insertSendSql(count: number): string {
  const addressList = (k: number) => `($13::text[])[($14::int[])[o + ${2 * k + 1}]:($14::int[])[o + ${2 * k + 2}]]`;
  const bodies = (first: number) => `ARRAY[${Array.from({ length: count }, (_, i) => `$${first + i}::text`).join(', ')}]`;
  return `WITH input AS (
  SELECT x.*, (x.n::int - 1) * 8 AS o
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], ${bodies(21)}, ${bodies(21 + count)},
                $7::jsonb[], $8::jsonb[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $20::uuid[])
         WITH ORDINALITY AS x(id, team_id, region, source, from_address, subject, html, text_body, headers, tags,
                              message_id, last_event, scheduled_at, idempotency_key, dispatch_id, n)
), emails_in AS (
  INSERT INTO emails (id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to,
    subject, html, text_body, headers, tags, message_id, last_event, scheduled_at, idempotency_key, created_at)
  SELECT id, team_id, region, source, from_address, ${addressList(0)}, nullif(${addressList(1)}, '{}'),
    nullif(${addressList(2)}, '{}'), nullif(${addressList(3)}, '{}'), subject, html, text_body, headers, tags,
    message_id, last_event, scheduled_at, idempotency_key, clock_timestamp()
  FROM input
  RETURNING id
), outbox_in AS (
  INSERT INTO email_dispatches (id, region, due_at, email_ids)
  SELECT dispatch_id, region, coalesce(scheduled_at, now() + make_interval(secs => $19)), array_agg(id ORDER BY n)
  FROM input GROUP BY dispatch_id, region, scheduled_at
  RETURNING id
)`;
}

const INSERT_RECIPIENTS = `INSERT INTO email_recipients (email_id, position, kind, address)
SELECT * FROM unnest($15::uuid[], $16::smallint[], $17::text[], $18::text[])`;

/**
 * The parameters of insertSendSql and INSERT_RECIPIENTS: $1 to $18 as array literals, $19 (the
 * grace period), $20 (the outbox row of each email), then every html and every text. The literals are joined here in one pass; node-postgres would build
 * them element by element, escaping and concatenating each (several % of the API's CPU).
 */
function sendParameters(emails: NewEmail[], graceSeconds: number): unknown[] {
  const ids: string[] = [];
  const teams: string[] = [];
  const regions: string[] = [];
  const sources: string[] = [];
  const froms: string[] = [];
  const subjects: string[] = [];
  const headers: (string | null)[] = [];
  const tags: (string | null)[] = [];
  const messageIds: string[] = [];
  const lastEvents: string[] = [];
  const scheduled: (string | null)[] = [];
  const keys: (string | null)[] = [];
  const addresses: string[] = [];
  const bounds: number[] = [];
  const recipientEmails: string[] = [];
  const positions: number[] = [];
  const kinds: string[] = [];
  const recipientAddresses: string[] = [];
  const htmls: (string | null)[] = [];
  const texts: (string | null)[] = [];
  const dispatchIds: string[] = [];
  for (const { id, teamId, region, source, idempotencyKey, dispatchId, email, raw } of emails) {
    ids.push(id);
    dispatchIds.push(dispatchId);
    teams.push(teamId);
    regions.push(region);
    sources.push(source);
    froms.push(email.from);
    subjects.push(email.subject);
    htmls.push(email.html);
    texts.push(email.text);
    headers.push(email.headers && JSON.stringify(email.headers));
    tags.push(email.tags && JSON.stringify(email.tags));
    messageIds.push(raw?.messageId ?? `<${id}@${email.fromDomain}>`);
    lastEvents.push(email.scheduledAt ? 'scheduled' : 'queued');
    scheduled.push(email.scheduledAt?.toISOString() ?? null);
    keys.push(idempotencyKey);
    for (const list of [email.to, email.cc, email.bcc, email.replyTo]) {
      bounds.push(addresses.length + 1, addresses.length + list.length);
      addresses.push(...list);
    }
    email.recipients.forEach((r, position) => {
      recipientEmails.push(id);
      positions.push(position);
      kinds.push(r.kind);
      recipientAddresses.push(r.address);
    });
  }
  return [
    ...[ids, teams].map(plainArray),
    ...[regions, sources, froms, subjects, headers, tags, messageIds, lastEvents, scheduled, keys, addresses].map(textArray),
    plainArray(bounds),
    plainArray(recipientEmails),
    plainArray(positions),
    ...[kinds, recipientAddresses].map(textArray),
    graceSeconds,
    plainArray(dispatchIds),
    ...htmls,
    ...texts,
  ];
}

/** An array literal of values that need no quoting (UUIDs, integers). */
const plainArray = (values: (string | number)[]): string => `{${values.join(',')}}`;

/** An array literal of strings (or NULLs), each quoted with `"` and `\\` escaped. */
const textArray = (values: (string | null)[]): string =>
  `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;

function toSummary(row: EmailRow): EmailSummary {
  return {
    id: row.id,
    teamId: row.team_id,
    region: row.region,
    source: row.source,
    from: row.from_address,
    to: row.to_addresses,
    cc: row.cc_addresses,
    bcc: row.bcc_addresses,
    replyTo: row.reply_to,
    subject: row.subject,
    messageId: row.message_id,
    lastEvent: row.last_event,
    scheduledAt: row.scheduled_at,
    createdAt: row.created_at,
  };
}

function toRecord(row: EmailRow): EmailRecord {
  return { ...toSummary(row), html: row.html, text: row.text_body, headers: row.headers, tags: row.tags };
}
