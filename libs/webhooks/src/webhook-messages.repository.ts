import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { type HealthTick, type WebhookSubscription, WebhookTargetsRepository } from './webhook-targets.repository';

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
 * written by it too, after the outcomes' transaction (see recordAttempts).
 */
@Injectable()
export class WebhookMessagesRepository {
  private readonly webhooks: WebhookTargetsRepository;

  constructor(
    private readonly planes: EmailPlanes,
    /** The control plane, where the webhooks are. */
    control: DataSource,
  ) {
    this.webhooks = new WebhookTargetsRepository(control);
  }

  /** The webhooks role's region's email plane: the messages of the events of its region's stream. */
  private get db(): DataSource {
    return this.planes.home;
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
   * order (an event given twice counts at its first place). A webhook deleted between the read and
   * the insert still gets its messages (no foreign key crosses the planes): the dispatcher deletes
   * them when it meets them (WebhookClaimsRepository), never sending them.
   */
  async fanOutMany(events: readonly FanOutEvent[]): Promise<number[]> {
    if (events.length === 0) return [];
    const rows = await this.insertMessages(events);
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
   * Records the attempts and settles their messages in one transaction (group commit: two
   * statements for the whole batch), then keeps each endpoint's health as if the outcomes were
   * recorded one after the other in the order given: a success clears its failing streak; a
   * failure starts one (or continues it), and an endpoint failing for `disableAfterMs` with no
   * success in between is disabled, as a 410 disables it at once.
   *
   * The messages are the email plane's and the health the control plane's, which issue 15 puts in
   * databases of their own: two commits, the messages' first. They are what must be exact (an
   * attempt recorded twice or not at all is wrong forever, and a message left unsettled is sent
   * again), while health is a running judgement that the next outcomes correct. The other order
   * would apply the ticks of outcomes whose recording then fails, and again when they are
   * recorded one by one. Should the process die between the two commits (or the health's fail:
   * WebhookHealthNotRecordedError), the batch's ticks are lost and nothing else:
   * - a failure's: nothing if it continued a streak; if it began one, the streak begins at the
   *   next failure recorded, so a failing endpoint is disabled about one retry interval later,
   *   against a window of days;
   * - a success's: its clearing of the streak waits for the next success. Accepted: until then a
   *   failure continues the streak from before the lost success, which only matters if the
   *   endpoint then fails without one success until the old streak's window is up; it is then
   *   disabled early (by less than the window), and a disabled webhook keeps its messages for
   *   when it is enabled again;
   * - a 410's: its message is settled failed and the webhook stays enabled until the next message
   *   to it is answered 410 again, which disables it then; no message is lost meanwhile.
   */
  async recordAttempts(outcomes: readonly AttemptOutcome[], disableAfterMs: number): Promise<void> {
    if (outcomes.length === 0) return;
    await this.settle(outcomes);
    const ticks = healthTicks(outcomes);
    await this.webhooks.recordHealth(ticks, disableAfterMs).catch((error: unknown) => {
      throw new WebhookHealthNotRecordedError([...ticks.keys()], error);
    });
  }

  /** The attempts recorded and their messages settled, in one transaction. */
  private async settle(outcomes: readonly AttemptOutcome[]): Promise<void> {
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
    });
  }
}

/**
 * The outcomes were recorded (their attempts and messages committed) but their webhooks' health
 * was not. Recording them again would record their attempts twice: the caller must not, and the
 * health misses their ticks (see recordAttempts).
 */
export class WebhookHealthNotRecordedError extends Error {
  constructor(
    readonly webhookIds: string[],
    cause: unknown,
  ) {
    super(`health of ${webhookIds.length} webhook(s) not recorded: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'WebhookHealthNotRecordedError';
  }
}

/** An attempt with the message it belongs to and what became of the message. */
export interface AttemptOutcome {
  message: Pick<DueMessage, 'id' | 'webhookId'>;
  attempt: AttemptRecord;
  settlement: MessageSettlement;
}

/**
 * Each webhook's ticks in the outcomes' order, consecutive repeats collapsed (a second success,
 * failure or disabling in a row changes nothing the first did not).
 */
function healthTicks(outcomes: readonly AttemptOutcome[]): Map<string, HealthTick[]> {
  const ticks = new Map<string, HealthTick[]>();
  for (const o of outcomes) {
    const tick = healthTick(o);
    const ofWebhook = ticks.get(o.message.webhookId) ?? [];
    if (ofWebhook.at(-1)?.kind !== tick.kind) ofWebhook.push(tick);
    ticks.set(o.message.webhookId, ofWebhook);
  }
  return ticks;
}

function healthTick(o: AttemptOutcome): HealthTick {
  if (o.settlement.status === 'success') return { kind: 'success' };
  if (o.settlement.status === 'failed' && o.settlement.disableWebhook) return { kind: 'disable', reason: o.settlement.disableWebhook };
  return { kind: 'failure', sentAt: o.attempt.sentAt };
}
