import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { WebhookEventType } from './webhook.types';

export type WebhookMessageStatus = 'pending' | 'attempting' | 'success' | 'failed';

/** The Resend envelope a receiver gets. */
export interface WebhookPayload {
  type: string;
  created_at: string;
  data: unknown;
}

export interface FanOutEvent {
  id: string;
  teamId: string;
  type: string;
  payload: WebhookPayload;
}

/** A claimed message with what its delivery needs from its webhook. */
export interface DueMessage {
  id: string;
  webhookId: string;
  teamId: string;
  payload: WebhookPayload;
  /** Attempts already made. */
  attempts: number;
  endpoint: string;
  signingSecret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

export interface AttemptRecord {
  messageId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string;
  durationMs: number;
  sentAt: Date;
}

/** What becomes of the message after an attempt. */
export type MessageSettlement =
  | { status: 'success' }
  | { status: 'failed'; disableWebhook: string | null }
  | { status: 'pending'; nextAttemptAt: Date };

interface DueRow {
  id: string;
  webhook_id: string;
  team_id: string;
  payload: WebhookPayload;
  attempts: number;
  endpoint: string;
  signing_secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

// Time-ordered like a ULID: 12 hex digits of epoch milliseconds, then 20 random hex digits.
const MESSAGE_ID_SQL = `'msg_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
  || substr(replace(gen_random_uuid()::text, '-', ''), 1, 20)`;

/** Webhook messages (one per webhook × event) and their attempts. */
@Injectable()
export class WebhookMessagesRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * One message, due now, per enabled webhook of the team subscribed to the type. The
   * (webhook_id, event_id) key makes a redelivered event a no-op. Returns how many were new.
   */
  async fanOut(event: FanOutEvent): Promise<number> {
    const rows: { id: string }[] = await this.db.query(
      `INSERT INTO webhook_messages (id, webhook_id, team_id, event_id, event_type, payload, next_attempt_at)
       SELECT ${MESSAGE_ID_SQL}, w.id, w.team_id, $2, $3, $4::jsonb, now()
       FROM webhooks w WHERE w.team_id = $1 AND w.status = 'enabled' AND $3 = ANY(w.events)
       ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id`,
      [event.teamId, event.id, event.type as WebhookEventType, JSON.stringify(event.payload)],
    );
    return rows.length;
  }

  /**
   * Claims up to `limit` due messages of enabled webhooks, at most `slots(webhookId)` per
   * webhook, hiding them from other dispatchers for `leaseMs` (a crashed dispatcher's claims
   * come due again when the lease ends).
   */
  async claimDue(limit: number, leaseMs: number, slots: (webhookId: string) => number): Promise<DueMessage[]> {
    return this.db.transaction(async (tx) => {
      const rows: DueRow[] = await tx.query(
        `SELECT m.id, m.webhook_id, m.team_id, m.payload, m.attempts,
                w.endpoint, w.signing_secret, w.previous_secret, w.previous_secret_expires_at
         FROM webhook_messages m JOIN webhooks w ON w.id = m.webhook_id
         WHERE m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now() AND w.status = 'enabled'
         ORDER BY m.next_attempt_at LIMIT $1
         FOR UPDATE OF m SKIP LOCKED`,
        [limit * 4],
      );
      const taken = new Map<string, number>();
      const chosen = rows.filter((r) => {
        const n = taken.get(r.webhook_id) ?? 0;
        if (n >= slots(r.webhook_id)) return false;
        taken.set(r.webhook_id, n + 1);
        return true;
      }).slice(0, limit);
      if (chosen.length === 0) return [];
      await tx.query(
        `UPDATE webhook_messages SET status = 'attempting', next_attempt_at = now() + $2 * interval '1 millisecond' WHERE id = ANY($1)`,
        [chosen.map((r) => r.id), leaseMs],
      );
      return chosen.map((r) => ({
        id: r.id,
        webhookId: r.webhook_id,
        teamId: r.team_id,
        payload: r.payload,
        attempts: r.attempts,
        endpoint: r.endpoint,
        signingSecret: r.signing_secret,
        previousSecret: r.previous_secret,
        previousSecretExpiresAt: r.previous_secret_expires_at,
      }));
    });
  }

  /** Records the attempt and settles the message (and disables its webhook on a 410) in one transaction. */
  async recordAttempt(message: Pick<DueMessage, 'id' | 'webhookId'>, attempt: AttemptRecord, settlement: MessageSettlement): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO webhook_attempts (message_id, attempt, status_code, error, response_excerpt, duration_ms, sent_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [attempt.messageId, attempt.attempt, attempt.statusCode, attempt.error, attempt.responseExcerpt, attempt.durationMs, attempt.sentAt],
      );
      const nextAttemptAt = settlement.status === 'pending' ? settlement.nextAttemptAt : null;
      await tx.query(`UPDATE webhook_messages SET status = $2, attempts = greatest(attempts, $3), next_attempt_at = $4 WHERE id = $1`, [
        message.id,
        settlement.status,
        attempt.attempt,
        nextAttemptAt,
      ]);
      if (settlement.status === 'failed' && settlement.disableWebhook) {
        await tx.query(`UPDATE webhooks SET status = 'disabled', disabled_reason = $2 WHERE id = $1 AND status = 'enabled'`, [
          message.webhookId,
          settlement.disableWebhook,
        ]);
      }
    });
  }
}
