import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, HeraldConfig } from '@herald/config';
import { DataSource, EntityManager } from 'typeorm';
import { PageRequest, affectedRows, keysetPage } from '@herald/database';
import { EmailEvent, EmailRecord, EmailSource, EmailSummary } from './email.types';
import type { NormalizedEmail } from './validation';

/** What the send path writes for one accepted email. */
export interface NewEmail {
  id: string;
  teamId: string;
  region: string;
  source: EmailSource;
  idempotencyKey: string | null;
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

const orNull = (list: string[]) => (list.length ? list : null);

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
  ) {}

  /** Inserts emails, recipients, attachments and SMTP messages atomically (one statement). */
  async insert(emails: NewEmail[], manager: EntityManager = this.db.manager): Promise<void> {
    const rows = emails.map(({ id, teamId, region, source, idempotencyKey, email, raw }) => ({
      id,
      team_id: teamId,
      region,
      source,
      from_address: email.from,
      to_addresses: email.to,
      cc_addresses: orNull(email.cc),
      bcc_addresses: orNull(email.bcc),
      reply_to: orNull(email.replyTo),
      subject: email.subject,
      html: email.html,
      text_body: email.text,
      headers: email.headers,
      tags: email.tags,
      message_id: raw?.messageId ?? `<${id}@${email.fromDomain}>`,
      last_event: email.scheduledAt ? 'scheduled' : 'queued',
      scheduled_at: email.scheduledAt?.toISOString() ?? null,
      idempotency_key: idempotencyKey,
    }));
    const recipients = emails.flatMap(({ id, email }) =>
      email.recipients.map((r, position) => ({ email_id: id, position, kind: r.kind, address: r.address })),
    );
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
    // Each MIME is its own parameter: node-postgres sends a Buffer as binary, with no encoding.
    const mimes = emails.flatMap(({ id, raw }) => (raw ? [id, raw.mime] : []));
    const mimeValues = Array.from({ length: mimes.length / 2 }, (_, i) => `($${5 + 2 * i}::uuid, $${6 + 2 * i}::bytea)`);
    const mimeInsert = mimeValues.length
      ? `, mime_in AS (INSERT INTO email_mime (email_id, mime) VALUES ${mimeValues.join(', ')} RETURNING email_id)`
      : '';
    await manager.query(
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
           id uuid, team_id uuid, region text, source text, from_address text, to_addresses text[],
           cc_addresses text[], bcc_addresses text[], reply_to text[], subject text, html text, text_body text,
           headers jsonb, tags jsonb, message_id text, last_event text, scheduled_at timestamptz, idempotency_key text)
       ), emails_in AS (
         INSERT INTO emails (id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses,
           reply_to, subject, html, text_body, headers, tags, message_id, last_event, scheduled_at, dispatch_at,
           idempotency_key, created_at)
         SELECT id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to,
           subject, html, text_body, headers, tags, message_id, last_event, scheduled_at,
           coalesce(scheduled_at, now() + make_interval(secs => $4)), idempotency_key, clock_timestamp()
         FROM input
         RETURNING id
       ), recipients_in AS (
         INSERT INTO email_recipients (email_id, position, kind, address)
         SELECT email_id, position, kind, address
         FROM jsonb_to_recordset($2::jsonb) AS r(email_id uuid, position smallint, kind text, address text)
         RETURNING email_id
       )${mimeInsert}
       INSERT INTO email_attachments (email_id, position, filename, content_type, content_id, path, content, size)
       SELECT email_id, position, filename, content_type, content_id, path, decode(content, 'base64'), size
       FROM jsonb_to_recordset($3::jsonb) AS a(email_id uuid, position smallint, filename text, content_type text,
         content_id text, path text, content text, size integer)`,
      [JSON.stringify(rows), JSON.stringify(recipients), JSON.stringify(attachments), this.config.DISPATCH_GRACE_SECONDS, ...mimes],
    );
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

  /** Moves a scheduled email that has not been dispatched yet. False if it cannot be moved. */
  async reschedule(teamId: string, id: string, scheduledAt: Date): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE emails SET scheduled_at = $3, dispatch_at = $3
       WHERE team_id = $1 AND id = $2 AND last_event = 'scheduled' AND dispatched_at IS NULL`,
      [teamId, id, scheduledAt],
    );
    return affectedRows(result) === 1;
  }

  /** Cancels a scheduled email that has not been dispatched yet; it never comes due again. */
  async cancel(teamId: string, id: string): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE emails SET last_event = 'canceled', dispatch_at = 'infinity'
       WHERE team_id = $1 AND id = $2 AND last_event = 'scheduled' AND dispatched_at IS NULL`,
      [teamId, id],
    );
    return affectedRows(result) === 1;
  }

  async exists(teamId: string, id: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM emails WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length > 0;
  }
}


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
