import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { EmailPlanes, NamedStatement, PageRequest, Transaction, affectedRows, mergedKeysetPage } from '@herald/database';
import type { EmailRecord, EmailSummary, NewEmail } from './email-record.types';
import type { EmailEventRecord } from './email-events';
import { EmailEventsRepository } from './email-events.repository';
import { sendInsert } from './email-insert';
import { SUMMARY_COLUMNS, toRecord, toSummary, type EmailRow } from './email.row';
import { scheduledEvents } from './scheduled-events';
import { fillTemplateBodies } from './template-bodies';
import { MESSAGES_CONFIG, MessagesConfig } from './messages.config';

/**
 * Emails and their recipients in Postgres, each in its region's email plane (EmailPlanes): an
 * email is found by its id's region, and a team's emails are listed and counted across every
 * region's. Every method takes the team first, so a query cannot forget its tenant. The send
 * path's insert is one statement (email-insert.ts), so a batch of 100 emails costs one round trip.
 */
@Injectable()
export class EmailRepository {
  constructor(
    private readonly planes: EmailPlanes,
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
    const db = await this.planeOf(emails);
    const stored = db === this.planes.home ? emails : await this.uploadsInlined(emails);
    let events: EmailEventRecord[] = [];
    if (!alongside && !stored.some((e) => e.email.scheduledAt)) await this.insertEmails(stored, db.manager);
    else {
      events = await db.transaction(async (m) => {
        await alongside?.(m);
        await this.insertEmails(stored, m);
        return this.events.insert(m, scheduledEvents(stored));
      });
    }
    if (stored !== emails) await this.discardUploads(emails);
    return events;
  }

  /**
   * The emails with their SMTP message's stored chunks (email_mime_uploads, written as DATA
   * arrived, in this process's region's email plane) read into the message itself: for emails
   * stored in another region's database, whose insert cannot join chunks it does not hold.
   */
  private async uploadsInlined(emails: NewEmail[]): Promise<NewEmail[]> {
    return Promise.all(
      emails.map(async (e) => {
        if (!e.raw?.upload) return e;
        const chunks: { data: Buffer }[] = await this.planes.home.query(`SELECT data FROM email_mime_uploads WHERE upload_id = $1 ORDER BY seq`, [
          e.raw.upload.id,
        ]);
        if (chunks.length !== e.raw.upload.chunks) throw new Error(`the stored message of upload ${e.raw.upload.id} is incomplete`);
        return { ...e, raw: { mime: [e.raw.mime, ...chunks.map((c) => c.data)].flat(), messageId: e.raw.messageId } };
      }),
    );
  }

  /** The chunks uploadsInlined read, once their emails committed (a crash first leaves them to the sweep). */
  private async discardUploads(emails: NewEmail[]): Promise<void> {
    const ids = emails.flatMap((e) => (e.raw?.upload ? [e.raw.upload.id] : []));
    if (ids.length) await this.planes.home.query(`DELETE FROM email_mime_uploads WHERE upload_id = ANY($1::uuid[])`, [ids]);
  }

  /**
   * As insert with `alongside`, where `keep` (in the transaction, before the emails) writes what
   * decides which of `emails` are still to be written and answers their ids: only those are
   * inserted, in the same one statement, with their `email.scheduled` events (left to the events
   * outbox to publish). Answers the emails written.
   */
  async insertKept(emails: NewEmail[], keep: (tx: Transaction) => Promise<ReadonlySet<string>>): Promise<NewEmail[]> {
    return (await this.planeOf(emails)).transaction(async (m) => {
      const ids = await keep(m);
      const kept = emails.filter((e) => ids.has(e.id));
      await this.insertEmails(kept, m);
      await this.events.insert(m, scheduledEvents(kept));
      return kept;
    });
  }

  /** The email plane of emails stored together: their region's. They have one (a request's, a broadcast chunk's), or the insert could not be atomic. */
  private planeOf(emails: NewEmail[]): Promise<DataSource> {
    const regions = new Set(emails.map((e) => e.region));
    if (regions.size > 1) throw new Error(`emails of several regions (${[...regions].join(', ')}) cannot be stored in one transaction`);
    return regions.size ? this.planes.of(emails[0].region) : Promise.resolve(this.planes.home);
  }

  private async insertEmails(emails: NewEmail[], manager: EntityManager): Promise<void> {
    if (!emails.length) return;
    const { text, values, name } = sendInsert(emails, this.config.DISPATCH_GRACE_SECONDS);
    if (name) await NamedStatement.of(name, text).run(manager, values);
    else await manager.query(text, values);
  }

  async get(teamId: string, id: string): Promise<EmailRecord | null> {
    const db = await this.planes.ofId(id);
    const rows: EmailRow[] = await db.query(
      `SELECT ${SUMMARY_COLUMNS}, html, text_body, headers, tags, template_id, template_values FROM emails WHERE team_id = $1 AND id = $2`,
      [teamId, id],
    );
    return rows.length ? toRecord((await fillTemplateBodies(db, rows))[0]) : null;
  }

  /** The MIME message an email relayed over SMTP was stored with (email_mime), or null. */
  async mime(teamId: string, id: string): Promise<Buffer | null> {
    const rows: { mime: Buffer }[] = await (
      await this.planes.ofId(id)
    ).query(`SELECT m.mime FROM email_mime m JOIN emails e ON e.id = m.email_id WHERE e.team_id = $1 AND m.email_id = $2`, [teamId, id]);
    return rows.length ? rows[0].mime : null;
  }

  /** Newest first, across every region's email plane; `after` pages toward older emails, `before` toward newer (see mergedKeysetPage). */
  async list(teamId: string, page: PageRequest): Promise<{ items: EmailSummary[]; hasMore: boolean }> {
    const dbs = await Promise.all(this.planes.all().map((p) => p.db));
    const query = { table: 'emails', columns: SUMMARY_COLUMNS, teamId };
    const { rows, hasMore } = await mergedKeysetPage<EmailRow>(dbs, (id) => this.planes.ofId(id), query, page);
    return { items: rows.map(toSummary), hasMore };
  }

  /**
   * Moves a scheduled email that has not been dispatched yet (its outbox row, whose id is the
   * email's, is still there).
   * False if it cannot be moved. A reconciler publishing it holds the row: this waits, then finds
   * it gone.
   */
  async reschedule(teamId: string, id: string, scheduledAt: Date): Promise<boolean> {
    const result = await (
      await this.planes.ofId(id)
    ).query(
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
    const result = await (
      await this.planes.ofId(id)
    ).query(
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

  /** Recipients of the team's emails accepted since `monthStart`, and of those since `dayStart`, in every region. */
  async recipientsAcceptedSince(teamId: string, monthStart: Date, dayStart: Date): Promise<{ month: number; day: number }> {
    const counts = await Promise.all(
      this.planes.all().map(async ({ db }) => {
        const [row]: { month: number; day: number }[] = await (
          await db
        ).query(
          `SELECT count(*)::int AS month, (count(*) FILTER (WHERE e.created_at >= $3))::int AS day
             FROM emails e JOIN email_recipients r ON r.email_id = e.id
            WHERE e.team_id = $1 AND e.created_at >= $2`,
          [teamId, monthStart, dayStart],
        );
        return row ?? { month: 0, day: 0 };
      }),
    );
    return counts.reduce((sum, c) => ({ month: sum.month + c.month, day: sum.day + c.day }), { month: 0, day: 0 });
  }

  async exists(teamId: string, id: string): Promise<boolean> {
    const rows = await (await this.planes.ofId(id)).query(`SELECT 1 FROM emails WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length > 0;
  }
}
