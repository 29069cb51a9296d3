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
  { status: 'success' } | { status: 'failed'; disableWebhook: string | null } | { status: 'pending'; nextAttemptAt: Date };

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
    return (await this.fanOutMany([event]))[0]!;
  }

  /**
   * fanOut for several events in one statement (group commit of the events consumer); returns
   * how many messages each event made, in order (an event given twice counts at its first place).
   */
  async fanOutMany(events: readonly FanOutEvent[]): Promise<number[]> {
    if (events.length === 0) return [];
    const rows: { event_id: string }[] = await this.db.query(
      `INSERT INTO webhook_messages (id, webhook_id, team_id, event_id, event_type, payload, next_attempt_at)
       SELECT ${MESSAGE_ID_SQL}, w.id, w.team_id, e.id, e.type, e.payload, now()
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[]) AS e(team_id, id, type, payload)
         JOIN webhooks w ON w.team_id = e.team_id AND w.status = 'enabled' AND e.type = ANY(w.events)
       ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING event_id`,
      [
        events.map((e) => e.teamId),
        events.map((e) => e.id),
        events.map((e) => e.type as WebhookEventType),
        events.map((e) => JSON.stringify(e.payload)),
      ],
    );
    const made = new Map<string, number>();
    for (const r of rows) made.set(r.event_id, (made.get(r.event_id) ?? 0) + 1);
    return events.map((e) => {
      const n = made.get(e.id) ?? 0;
      made.delete(e.id);
      return n;
    });
  }

  /**
   * Claims up to `limit` due messages of enabled webhooks, at most `perWebhook - busy(webhook)`
   * per webhook, hiding them from other dispatchers for `leaseMs` (a crashed dispatcher's claims
   * come due again when the lease ends). One statement, cheap behind a large backlog: the oldest
   * due messages are read from the due index alone, in its order (materialized, so the planner
   * cannot turn it into a scan of every due row per webhook; messages of disabled webhooks are
   * filtered out there, a key lookup each, so they cannot crowd the window), the per-webhook quota is applied in SQL, and only the rows
   * taken are locked (SKIP LOCKED and re-checked, so two dispatchers never take the same
   * message) and leased. The webhooks in `own` (those the dispatcher is delivering to) are also
   * read each by its own due index, up to its quota, so one whose endpoint keeps up is not held
   * to the pace of another webhook's older backlog filling the window.
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    perWebhook: number,
    busy: ReadonlyMap<string, number>,
    own: readonly string[] = [],
  ): Promise<DueMessage[]> {
    if (limit <= 0) return [];
    // The due index read in its order, stopping at the window: without this the planner, whose
    // statistics lag a sudden backlog, reads every due row into a bitmap and sorts them, which
    // makes each claim cost in proportion to the backlog (≈ 40 ms at 60k due vs ≈ 9 ms).
    const rows: DueRow[] = await this.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL enable_bitmapscan = off`);
      return tx.query(
        `WITH candidates AS MATERIALIZED (
           (SELECT m.id, m.webhook_id, m.next_attempt_at
              FROM webhook_messages m
             WHERE m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now()
               AND (SELECT d.status FROM webhooks d WHERE d.id = m.webhook_id) = 'enabled'
             ORDER BY m.next_attempt_at LIMIT $1)
           UNION
           (SELECT m.id, m.webhook_id, m.next_attempt_at
              FROM unnest($7::uuid[]) AS o(webhook_id)
              LEFT JOIN unnest($4::uuid[], $5::int[]) AS b(webhook_id, n) ON b.webhook_id = o.webhook_id
              CROSS JOIN LATERAL (
                SELECT m.id, m.webhook_id, m.next_attempt_at FROM webhook_messages m
                 WHERE m.webhook_id = o.webhook_id AND m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now()
                 ORDER BY m.next_attempt_at LIMIT greatest(0, $3::int - coalesce(b.n, 0))
              ) m)
         ), ranked AS (
           SELECT c.id, c.next_attempt_at,
                  row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at, c.id) AS rank,
                  $3::int - coalesce(b.n, 0) AS free
             FROM candidates c JOIN webhooks w ON w.id = c.webhook_id AND w.status = 'enabled' LEFT JOIN unnest($4::uuid[], $5::int[]) AS b(webhook_id, n) ON b.webhook_id = c.webhook_id
         ), picked AS (
           SELECT id FROM ranked WHERE rank <= free ORDER BY next_attempt_at LIMIT $2
         ), locked AS (
           SELECT m.id FROM webhook_messages m
            WHERE m.id IN (SELECT id FROM picked) AND m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now()
            FOR UPDATE SKIP LOCKED
         ), claimed AS (
           UPDATE webhook_messages m
              SET status = 'attempting', next_attempt_at = now() + $6 * interval '1 millisecond'
             FROM locked l, webhooks w
            WHERE m.id = l.id AND w.id = m.webhook_id
           RETURNING m.id, m.webhook_id, m.team_id, m.payload, m.attempts,
                     w.endpoint, w.signing_secret, w.previous_secret, w.previous_secret_expires_at
         )
         SELECT * FROM claimed ORDER BY id`,
        [limit * 4, limit, perWebhook, [...busy.keys()], [...busy.values()], leaseMs, own],
      );
    });
    return rows.map((r) => ({
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
  }

  /**
   * Up to `limit` enabled webhooks with messages due now: the webhooks with undelivered messages
   * are walked one index probe each (a loose scan of the per-webhook due index), however long
   * their backlogs.
   */
  async webhooksWithDueMessages(limit: number): Promise<string[]> {
    const rows: { webhook_id: string }[] = await this.db.query(
      `WITH RECURSIVE hooks(webhook_id) AS (
         (SELECT webhook_id FROM webhook_messages WHERE status IN ('pending', 'attempting') ORDER BY webhook_id LIMIT 1)
         UNION ALL
         SELECT (SELECT m.webhook_id FROM webhook_messages m
                  WHERE m.status IN ('pending', 'attempting') AND m.webhook_id > h.webhook_id ORDER BY m.webhook_id LIMIT 1)
           FROM hooks h WHERE h.webhook_id IS NOT NULL
       )
       SELECT h.webhook_id FROM hooks h JOIN webhooks w ON w.id = h.webhook_id AND w.status = 'enabled'
        WHERE EXISTS (SELECT 1 FROM webhook_messages m
                       WHERE m.webhook_id = h.webhook_id AND m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now())
        LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.webhook_id);
  }

  /** Hands claims back unattempted (a dispatcher shutting down): due again at once. */
  async releaseClaims(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`UPDATE webhook_messages SET next_attempt_at = now() WHERE id = ANY($1::text[]) AND status = 'attempting'`, [ids]);
  }

  /** One attempt and its outcome; see recordAttempts. */
  async recordAttempt(
    message: Pick<DueMessage, 'id' | 'webhookId'>,
    attempt: AttemptRecord,
    settlement: MessageSettlement,
    disableAfterMs: number,
  ): Promise<void> {
    await this.recordAttempts([{ message, attempt, settlement }], disableAfterMs);
  }

  /**
   * Records the attempts and settles their messages in one transaction (group commit: a few
   * statements for the whole batch), and keeps each endpoint's health as if the outcomes were
   * recorded one after the other in the order given: a success clears its failing streak; a
   * failure starts one (or continues it), and an endpoint failing for `disableAfterMs` with no
   * success in between is disabled, as a 410 disables it at once.
   */
  async recordAttempts(outcomes: readonly AttemptOutcome[], disableAfterMs: number): Promise<void> {
    if (outcomes.length === 0) return;
    const a = outcomes.map((o) => o.attempt);
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO webhook_attempts (message_id, attempt, status_code, error, response_excerpt, duration_ms, sent_at)
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[], $6::int[], $7::timestamptz[])`,
        [
          a.map((x) => x.messageId),
          a.map((x) => x.attempt),
          a.map((x) => x.statusCode),
          a.map((x) => x.error),
          a.map((x) => x.responseExcerpt),
          a.map((x) => Math.round(x.durationMs)),
          a.map((x) => x.sentAt),
        ],
      );
      await tx.query(
        `UPDATE webhook_messages m
            SET status = u.status, attempts = greatest(m.attempts, u.attempt), next_attempt_at = u.next_attempt_at
           FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[]) AS u(id, status, attempt, next_attempt_at)
          WHERE m.id = u.id`,
        [
          outcomes.map((o) => o.message.id),
          outcomes.map((o) => o.settlement.status),
          outcomes.map((o) => o.attempt.attempt),
          outcomes.map((o) => (o.settlement.status === 'pending' ? o.settlement.nextAttemptAt : null)),
        ],
      );
      // Each webhook's outcomes in order, consecutive repeats collapsed (a second success, failure
      // or disabling in a row changes nothing the first did not). Webhooks in id order, so two
      // batches lock the rows they share in the same order.
      const health = new Map<string, HealthOp[]>();
      for (const o of outcomes) {
        const op = healthOp(o);
        const ops = health.get(o.message.webhookId) ?? [];
        if (ops.at(-1)?.kind !== op.kind) ops.push(op);
        health.set(o.message.webhookId, ops);
      }
      const ids = [...health.keys()].sort();
      const onlySuccesses = ids.filter((id) => health.get(id)!.every((op) => op.kind === 'success'));
      if (onlySuccesses.length > 0) {
        await tx.query(`UPDATE webhooks SET failing_since = NULL WHERE id = ANY($1::uuid[]) AND failing_since IS NOT NULL`, [onlySuccesses]);
      }
      for (const id of ids) {
        const ops = health.get(id)!;
        if (ops.every((op) => op.kind === 'success')) continue;
        for (const op of ops) {
          if (op.kind === 'disable') {
            await tx.query(`UPDATE webhooks SET status = 'disabled', disabled_reason = $2 WHERE id = $1 AND status = 'enabled'`, [id, op.reason]);
          } else if (op.kind === 'success') {
            await tx.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [id]);
          } else {
            await tx.query(
              `UPDATE webhooks
                  SET failing_since = coalesce(failing_since, $2),
                      status = CASE WHEN coalesce(failing_since, $2) <= now() - $3::float8 * interval '1 millisecond' THEN 'disabled' ELSE status END,
                      disabled_reason = CASE WHEN coalesce(failing_since, $2) <= now() - $3::float8 * interval '1 millisecond'
                                             THEN 'every delivery failed for ' || round(($3::float8 / 3600000)::numeric, 1) || ' hours' ELSE disabled_reason END
                WHERE id = $1 AND status = 'enabled'`,
              [id, op.sentAt, disableAfterMs],
            );
          }
        }
      }
    });
  }
}

/** An attempt with the message it belongs to and what became of the message. */
export interface AttemptOutcome {
  message: Pick<DueMessage, 'id' | 'webhookId'>;
  attempt: AttemptRecord;
  settlement: MessageSettlement;
}

type HealthOp = { kind: 'success' } | { kind: 'failure'; sentAt: Date } | { kind: 'disable'; reason: string };

function healthOp(o: AttemptOutcome): HealthOp {
  if (o.settlement.status === 'success') return { kind: 'success' };
  if (o.settlement.status === 'failed' && o.settlement.disableWebhook) return { kind: 'disable', reason: o.settlement.disableWebhook };
  return { kind: 'failure', sentAt: o.attempt.sentAt };
}
