import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type WebhookSubscription, WebhookTargetsRepository } from './webhook-targets.repository';

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

// Time-ordered like a ULID: 12 hex digits of epoch milliseconds, then 20 random hex digits.
const MESSAGE_ID_SQL = `'msg_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
  || substr(replace(gen_random_uuid()::text, '-', ''), 1, 20)`;

/**
 * Webhook messages (one per webhook × event) and their attempts; claiming them is
 * WebhookClaimsRepository's. They are the email plane's, and the webhooks the control plane's
 * (libs/database planes.ts): no statement here names both. What fan-out needs of the webhooks
 * (which are enabled and subscribed to what) is read first by WebhookTargetsRepository, as they
 * are now, and passed to the insert as parameters; an outcome's effect on its webhook's health is
 * a statement of its own (still in the outcomes' transaction).
 */
@Injectable()
export class WebhookMessagesRepository {
  private readonly webhooks: WebhookTargetsRepository;

  constructor(private readonly db: DataSource) {
    this.webhooks = new WebhookTargetsRepository(db);
  }

  /**
   * One message, due now, per enabled webhook of the team subscribed to the type. The
   * (webhook_id, event_id) key makes a redelivered event a no-op. Returns how many were new.
   */
  async fanOut(event: FanOutEvent): Promise<number> {
    return (await this.fanOutMany([event]))[0]!;
  }

  /**
   * fanOut for several events at once (group commit of the events consumer): the enabled
   * webhooks of their teams read, then one insert; returns how many messages each event made, in
   * order (an event given twice counts at its first place).
   */
  async fanOutMany(events: readonly FanOutEvent[]): Promise<number[]> {
    if (events.length === 0) return [];
    const rows = await this.insertMessages(events).catch((error: unknown) => {
      // A webhook deleted between the read and the insert (its messages' foreign key): read again.
      if (isWebhookForeignKeyViolation(error)) return this.insertMessages(events);
      throw error;
    });
    const made = new Map<string, number>();
    for (const r of rows) made.set(r.event_id, (made.get(r.event_id) ?? 0) + 1);
    return events.map((e) => {
      const n = made.get(e.id) ?? 0;
      made.delete(e.id);
      return n;
    });
  }

  /** One message per enabled webhook of each event's team subscribed to its type; the new ones' event ids. */
  private async insertMessages(events: readonly FanOutEvent[]): Promise<{ event_id: string }[]> {
    const byTeam = new Map<string, WebhookSubscription[]>();
    for (const webhook of await this.webhooks.subscriptionsOf([...new Set(events.map((e) => e.teamId))])) {
      const ofTeam = byTeam.get(webhook.teamId);
      if (ofTeam) ofTeam.push(webhook);
      else byTeam.set(webhook.teamId, [webhook]);
    }
    const messages: { webhook: WebhookSubscription; event: number }[] = [];
    const used: FanOutEvent[] = [];
    for (const event of events) {
      const subscribed = (byTeam.get(event.teamId) ?? []).filter((w) => w.events.includes(event.type));
      if (!subscribed.length) continue;
      // Its place from 1 among the events passed, as WITH ORDINALITY numbers them.
      const n = used.push(event);
      for (const webhook of subscribed) messages.push({ webhook, event: n });
    }
    if (!messages.length) return [];
    return this.db.query(
      `INSERT INTO webhook_messages (id, webhook_id, team_id, event_id, event_type, payload, next_attempt_at)
       SELECT ${MESSAGE_ID_SQL}, w.webhook_id, w.team_id, e.id, e.type, e.payload, now()
         FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS w(webhook_id, team_id, event)
         JOIN unnest($4::text[], $5::text[], $6::jsonb[]) WITH ORDINALITY AS e(id, type, payload, n) ON e.n = w.event
       ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING event_id`,
      [
        messages.map((m) => m.webhook.id),
        messages.map((m) => m.webhook.teamId),
        messages.map((m) => m.event),
        used.map((e) => e.id),
        used.map((e) => e.type),
        used.map((e) => JSON.stringify(e.payload)),
      ],
    );
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

/** Postgres refused a message for a webhook that is no longer there (webhook_messages.webhook_id). */
function isWebhookForeignKeyViolation(error: unknown): boolean {
  const e = (error ?? {}) as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const pg = e.driverError ?? e;
  return pg.code === '23503' && pg.constraint === 'webhook_messages_webhook_id_fkey';
}

type HealthOp = { kind: 'success' } | { kind: 'failure'; sentAt: Date } | { kind: 'disable'; reason: string };

function healthOp(o: AttemptOutcome): HealthOp {
  if (o.settlement.status === 'success') return { kind: 'success' };
  if (o.settlement.status === 'failed' && o.settlement.disableWebhook) return { kind: 'disable', reason: o.settlement.disableWebhook };
  return { kind: 'failure', sentAt: o.attempt.sentAt };
}
