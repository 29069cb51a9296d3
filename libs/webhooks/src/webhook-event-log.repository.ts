import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
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
 * find nothing.
 */
@Injectable()
export class WebhookEventLogRepository {
  constructor(private readonly db: DataSource) {}

  /** Newest first; `after` (a message id of this webhook) pages toward older ones. */
  async list(teamId: string, webhookId: string, page: LogPage): Promise<{ items: EventLogEntry[]; hasMore: boolean }> {
    const rows: EntryRow[] = await this.db.query(
      `SELECT m.id, m.event_type, m.status, m.created_at, m.next_attempt_at, m.payload
       FROM webhook_messages m
       WHERE m.team_id = $1 AND m.webhook_id = $2
         AND ($3::text IS NULL OR (m.created_at, m.id) < (SELECT c.created_at, c.id FROM webhook_messages c WHERE c.id = $3 AND c.webhook_id = $2))
       ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
      [teamId, webhookId, page.after, page.limit + 1],
    );
    return { items: rows.slice(0, page.limit).map(toEntry), hasMore: rows.length > page.limit };
  }

  async get(teamId: string, webhookId: string, messageId: string): Promise<EventLogEntry | null> {
    const [row]: EntryRow[] = await this.db.query(
      `SELECT id, event_type, status, created_at, next_attempt_at, payload FROM webhook_messages WHERE team_id = $1 AND webhook_id = $2 AND id = $3`,
      [teamId, webhookId, messageId],
    );
    return row ? toEntry(row) : null;
  }

  /** Newest attempt first; `after` (an attempt id of this message) pages toward older ones. */
  async attempts(messageId: string, page: LogPage): Promise<{ items: EventLogAttempt[]; hasMore: boolean }> {
    const rows: AttemptRow[] = await this.db.query(
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
    await this.db.query(`DELETE FROM webhook_messages WHERE team_id = $1 AND webhook_id = $2`, [teamId, webhookId]);
  }

  /**
   * Queues the message for delivery now, under the same id. A settled one (success or failed)
   * becomes pending with a fresh attempt budget; a pending one is brought forward; one being
   * attempted right now is left to that attempt (null when the team's webhook has no such message).
   */
  async replay(teamId: string, webhookId: string, messageId: string): Promise<ReplayOutcome> {
    const [rows]: [{ id: string }[], number] = await this.db.query(
      `UPDATE webhook_messages
       SET attempts = CASE WHEN status IN ('success', 'failed') THEN 0 ELSE attempts END,
           status = 'pending', next_attempt_at = now()
       WHERE team_id = $1 AND webhook_id = $2 AND id = $3 AND status <> 'attempting' RETURNING id`,
      [teamId, webhookId, messageId],
    );
    if (rows.length > 0) return 'requeued';
    return (await this.get(teamId, webhookId, messageId)) ? 'in_flight' : null;
  }
}
