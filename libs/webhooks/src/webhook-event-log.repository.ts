import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes, mergedKeysetPage } from '@herald/database';
import type { WebhookMessageStatus, WebhookPayload } from './webhook-messages.repository';

/** One webhook message as the event log shows it (the message id is the event id of this API). */
export interface EventLogEntry {
  id: string;
  type: string;
  status: WebhookMessageStatus;
  createdAt: Date;
  nextAttemptAt: Date | null;
  payload: WebhookPayload;
}

/** One recorded attempt of a message. */
export interface EventLogAttempt {
  id: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string;
  sentAt: Date;
}

export interface LogPage {
  limit: number;
  after: string | null;
}

/** What a replay found and did. */
export type ReplayOutcome = 'requeued' | 'in_flight' | null;

interface EntryRow {
  id: string;
  event_type: string;
  status: WebhookMessageStatus;
  created_at: Date;
  next_attempt_at: Date | null;
  payload: WebhookPayload;
}

interface AttemptRow {
  id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string;
  sent_at: Date;
}

const ENTRY_COLUMNS = 'id, event_type, status, created_at, next_attempt_at, payload';

const toEntry = (r: EntryRow): EventLogEntry => ({
  id: r.id,
  type: r.event_type,
  status: r.status,
  createdAt: r.created_at,
  nextAttemptAt: r.next_attempt_at,
  payload: r.payload,
});

/**
 * The read side of webhook messages for the /webhooks/:id/events API, replay, and the deletion of
 * a deleted webhook's messages. Every method takes the team and the webhook, so another team's ids
 * find nothing. A webhook's messages are made by each region's webhooks role in its own email plane
 * (EmailPlanes): the log reads every region's, and a message is looked for in each.
 */
@Injectable()
export class WebhookEventLogRepository {
  constructor(private readonly planes: EmailPlanes) {}

  /** Newest first, across regions; `after` (a message id of this webhook) pages toward older ones. */
  async list(teamId: string, webhookId: string, page: LogPage): Promise<{ items: EventLogEntry[]; hasMore: boolean }> {
    const query = { table: 'webhook_messages', columns: ENTRY_COLUMNS, teamId, equals: { webhook_id: webhookId } };
    const holding = async (id: string) => (await this.holding(teamId, webhookId, id)) ?? (await this.planes.all()[0].db);
    const { rows, hasMore } = await mergedKeysetPage<EntryRow>(await this.dbs(), holding, query, { ...page, before: null });
    return { items: rows.map(toEntry), hasMore };
  }

  async get(teamId: string, webhookId: string, messageId: string): Promise<EventLogEntry | null> {
    for (const db of await this.dbs()) {
      const [row]: EntryRow[] = await db.query(`SELECT ${ENTRY_COLUMNS} FROM webhook_messages WHERE team_id = $1 AND webhook_id = $2 AND id = $3`, [
        teamId,
        webhookId,
        messageId,
      ]);
      if (row) return toEntry(row);
    }
    return null;
  }

  /** Newest attempt first; `after` (an attempt id of this message) pages toward older ones. */
  async attempts(messageId: string, page: LogPage): Promise<{ items: EventLogAttempt[]; hasMore: boolean }> {
    const db = await this.holdingAttempts(messageId);
    if (!db) return { items: [], hasMore: false };
    const rows: AttemptRow[] = await db.query(
      `SELECT id::text AS id, attempt, status_code, error, response_excerpt, sent_at FROM webhook_attempts
       WHERE message_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
       ORDER BY id DESC LIMIT $3`,
      [messageId, page.after, page.limit + 1],
    );
    const items = rows.slice(0, page.limit).map((r) => ({
      id: r.id,
      attempt: r.attempt,
      statusCode: r.status_code,
      error: r.error,
      responseExcerpt: r.response_excerpt,
      sentAt: r.sent_at,
    }));
    return { items, hasMore: rows.length > page.limit };
  }

  /**
   * Deletes the webhook's messages and, with them, their attempts: those of a deleted webhook,
   * whose row is the control plane's and so cannot cascade to them (issue 15). Idempotent.
   */
  async deleteOfWebhook(teamId: string, webhookId: string): Promise<void> {
    for (const db of await this.dbs()) await db.query(`DELETE FROM webhook_messages WHERE team_id = $1 AND webhook_id = $2`, [teamId, webhookId]);
  }

  /**
   * Queues the message for delivery now, under the same id. A settled one (success or failed)
   * becomes pending with a fresh attempt budget; a pending one is brought forward; one being
   * attempted right now is left to that attempt (null when the team's webhook has no such message).
   */
  async replay(teamId: string, webhookId: string, messageId: string): Promise<ReplayOutcome> {
    const db = await this.holding(teamId, webhookId, messageId);
    if (!db) return null;
    const [rows]: [{ id: string }[], number] = await db.query(
      `UPDATE webhook_messages
       SET attempts = CASE WHEN status IN ('success', 'failed') THEN 0 ELSE attempts END,
           status = 'pending', next_attempt_at = now()
       WHERE team_id = $1 AND webhook_id = $2 AND id = $3 AND status <> 'attempting' RETURNING id`,
      [teamId, webhookId, messageId],
    );
    return rows.length > 0 ? 'requeued' : 'in_flight';
  }

  /** Every served region's email plane, one per database. */
  private dbs(): Promise<DataSource[]> {
    return Promise.all(this.planes.all().map((p) => p.db));
  }

  /** The email plane holding the team's webhook's message, or null. */
  private async holding(teamId: string, webhookId: string, messageId: string): Promise<DataSource | null> {
    for (const db of await this.dbs()) {
      const found: unknown[] = await db.query(`SELECT 1 FROM webhook_messages WHERE team_id = $1 AND webhook_id = $2 AND id = $3`, [
        teamId,
        webhookId,
        messageId,
      ]);
      if (found.length) return db;
    }
    return null;
  }

  /** The email plane holding a message's attempts (its own), or null. */
  private async holdingAttempts(messageId: string): Promise<DataSource | null> {
    const dbs = await this.dbs();
    if (dbs.length === 1) return dbs[0];
    for (const db of dbs) {
      const found: unknown[] = await db.query(`SELECT 1 FROM webhook_messages WHERE id = $1`, [messageId]);
      if (found.length) return db;
    }
    return null;
  }
}
