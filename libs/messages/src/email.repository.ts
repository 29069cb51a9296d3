import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { NamedStatement, PageRequest, Transaction, affectedRows, keysetPage } from '@herald/database';
import type { EmailRecord, EmailSummary, NewEmail } from './email-record.types';
import type { EmailEventRecord } from './email-events';
import { EmailEventsRepository } from './email-events.repository';
import { sendInsert } from './email-insert';
import { SUMMARY_COLUMNS, toRecord, toSummary, type EmailRow } from './email.row';
import { scheduledEvents } from './scheduled-events';
import { fillTemplateBodies } from './template-bodies';
import { MESSAGES_CONFIG, MessagesConfig } from './messages.config';

/**
 * Emails and their recipients in Postgres. Every method takes the team first, so a query
 * cannot forget its tenant. The send path's insert is one statement (email-insert.ts), so a
 * batch of 100 emails costs one round trip.
 */
@Injectable()
export class EmailRepository {
  constructor(
    private readonly db: DataSource,
    @Inject(MESSAGES_CONFIG.token) private readonly config: MessagesConfig,
    private readonly events: EmailEventsRepository,
  ) {}

  /**
   * Inserts emails, recipients, attachments, SMTP messages and the emails' dispatch-outbox rows
   * atomically, in one statement; with scheduled emails among them, or with `alongside` (other
   * records to commit with them), in one transaction with their `email.scheduled` events.
   * Returns those events, to publish once committed.
   */
  async insert(emails: NewEmail[], alongside?: (tx: Transaction) => Promise<unknown>): Promise<EmailEventRecord[]> {
    if (!alongside && !emails.some((e) => e.email.scheduledAt)) {
      await this.insertEmails(emails, this.db.manager);
      return [];
    }
    return this.db.transaction(async (m) => {
      await alongside?.(m);
      await this.insertEmails(emails, m);
      return this.events.insert(m, scheduledEvents(emails));
    });
  }

  /**
   * As insert with `alongside`, where `keep` (in the transaction, before the emails) writes what
   * decides which of `emails` are still to be written and answers their ids: only those are
   * inserted, in the same one statement, with their `email.scheduled` events (left to the events
   * outbox to publish). Answers the emails written.
   */
  async insertKept(emails: NewEmail[], keep: (tx: Transaction) => Promise<ReadonlySet<string>>): Promise<NewEmail[]> {
    return this.db.transaction(async (m) => {
      const ids = await keep(m);
      const kept = emails.filter((e) => ids.has(e.id));
      await this.insertEmails(kept, m);
      await this.events.insert(m, scheduledEvents(kept));
      return kept;
    });
  }

  private async insertEmails(emails: NewEmail[], manager: EntityManager): Promise<void> {
    if (!emails.length) return;
    const { text, values, name } = sendInsert(emails, this.config.DISPATCH_GRACE_SECONDS);
    if (name) await NamedStatement.of(name, text).run(manager, values);
    else await manager.query(text, values);
  }

  async get(teamId: string, id: string): Promise<EmailRecord | null> {
    const rows: EmailRow[] = await this.db.query(
      `SELECT ${SUMMARY_COLUMNS}, html, text_body, headers, tags, template_id, template_values FROM emails WHERE team_id = $1 AND id = $2`,
      [teamId, id],
    );
    return rows.length ? toRecord((await fillTemplateBodies(this.db, rows))[0]) : null;
  }

  /** The MIME message an email relayed over SMTP was stored with (email_mime), or null. */
  async mime(teamId: string, id: string): Promise<Buffer | null> {
    const rows: { mime: Buffer }[] = await this.db.query(
      `SELECT m.mime FROM email_mime m JOIN emails e ON e.id = m.email_id WHERE e.team_id = $1 AND m.email_id = $2`,
      [teamId, id],
    );
    return rows.length ? rows[0].mime : null;
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

  /** Recipients of the team's emails accepted since `monthStart`, and of those since `dayStart`. */
  async recipientsAcceptedSince(teamId: string, monthStart: Date, dayStart: Date): Promise<{ month: number; day: number }> {
    const [row]: { month: number; day: number }[] = await this.db.query(
      `SELECT count(*)::int AS month, (count(*) FILTER (WHERE e.created_at >= $3))::int AS day
         FROM emails e JOIN email_recipients r ON r.email_id = e.id
        WHERE e.team_id = $1 AND e.created_at >= $2`,
      [teamId, monthStart, dayStart],
    );
    return row ?? { month: 0, day: 0 };
  }

  async exists(teamId: string, id: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM emails WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length > 0;
  }
}
