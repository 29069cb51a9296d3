import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, HeraldConfig } from '@herald/config';
import { DataSource, EntityManager } from 'typeorm';
import { PageRequest, affectedRows, keysetPage } from '@herald/database';
import { EmailEvent, EmailRecord, EmailSource, EmailSummary } from './email.types';
import type { EmailEventRecord } from '@herald/delivery';
import { sendInsert } from './email-insert';
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
 * cannot forget its tenant. The send path's insert is one statement (email-insert.ts), so a
 * batch of 100 emails costs one round trip.
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
    const { text, values } = sendInsert(emails, this.config.DISPATCH_GRACE_SECONDS);
    await manager.query(text, values);
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
