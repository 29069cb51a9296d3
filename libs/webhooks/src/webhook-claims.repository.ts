import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import type { DueMessage, WebhookMessageStatus, WebhookPayload } from './webhook-messages.repository';
import { WebhookTargetsRepository } from './webhook-targets.repository';

/** What a claim answers: the messages to deliver, and the webhooks found disabled (their claims handed back). */
export interface ClaimedMessages {
  due: DueMessage[];
  stopped: string[];
}

/** The webhooks with undelivered messages: those enabled with some due now, and those disabled. */
export interface WebhooksWithMessages {
  due: string[];
  stopped: string[];
}

interface ClaimedRow {
  id: string;
  webhook_id: string;
  team_id: string;
  payload: WebhookPayload;
  attempts: number;
  /** The message's status and due time before the claim, to hand it back as it was (as text: a Date would drop its microseconds). */
  was_status: WebhookMessageStatus;
  was_due: string;
}

/**
 * The claim committed but what follows it failed (Postgres went away between the two
 * statements): the messages are leased and nobody will send them. The caller hands them back
 * (`releaseClaims`) once Postgres answers, so they are not hidden until their lease ends.
 */
export class StrandedClaimsError extends Error {
  constructor(
    readonly ids: string[],
    cause: unknown,
  ) {
    super(`${ids.length} webhook message(s) claimed but not read: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StrandedClaimsError';
  }
}

/** No webhook's id (ids are UUIDs of version 4 or 7): where the walk of the webhooks with messages starts. */
const BEFORE_EVERY_WEBHOOK = '00000000-0000-0000-0000-000000000000';

/**
 * The dispatcher's side of webhook messages: claiming due ones, handing claims back, and finding
 * the webhooks with messages due. The messages are the email plane's and the webhooks the control
 * plane's (libs/database planes.ts): no statement here names both; the webhooks are read by
 * WebhookTargetsRepository, as they are now, and what it finds is passed in as parameters or
 * applied to what a claim took.
 */
@Injectable()
export class WebhookClaimsRepository {
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
   * Claims up to `limit` due messages, at most `perWebhook - busy(webhook)` per webhook, hiding
   * them from other dispatchers for `leaseMs` (a crashed dispatcher's claims come due again when
   * the lease ends). One statement, cheap behind a large backlog: the oldest due messages are read
   * from the due index alone, in its order (materialized, so the planner cannot turn it into a
   * scan of every due row per webhook; messages of the webhooks in `skip`, those known not to be
   * enabled, are filtered out there, so they cannot crowd the window), the per-webhook quota is
   * applied in SQL, and only the rows taken are locked (SKIP LOCKED and re-checked, so two
   * dispatchers never take the same message) and leased. The webhooks in `own` (those the
   * dispatcher is delivering to) are also read each by its own due index, up to its quota, so one
   * whose endpoint keeps up is not held to the pace of another webhook's older backlog filling the
   * window.
   *
   * Then the claimed messages' webhooks are read as they are now (a statement of their own: see
   * WebhookTargetsRepository): the messages of enabled ones are answered with their endpoint and
   * secrets, those of a webhook disabled meanwhile are handed back as they were (`stopped` names
   * their webhooks, for the next claims to skip), and those of a deleted one are deleted, with
   * every other message of that webhook (deleteOfDeletedWebhooks). A failure after the claim
   * throws StrandedClaimsError naming what it took, for the caller to hand back; a crashed
   * dispatcher's claims come due when the lease ends.
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    perWebhook: number,
    busy: ReadonlyMap<string, number>,
    own: readonly string[] = [],
    skip: readonly string[] = [],
  ): Promise<ClaimedMessages> {
    if (limit <= 0) return { due: [], stopped: [] };
    // The due index read in its order, stopping at the window: without this the planner, whose
    // statistics lag a sudden backlog, reads every due row into a bitmap and sorts them, which
    // makes each claim cost in proportion to the backlog (≈ 40 ms at 60k due vs ≈ 9 ms).
    const rows: ClaimedRow[] = await this.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL enable_bitmapscan = off`);
      return tx.query(
        `WITH candidates AS MATERIALIZED (
           (SELECT m.id, m.webhook_id, m.next_attempt_at
              FROM webhook_messages m
             WHERE m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now() AND m.webhook_id <> ALL($8::uuid[])
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
             FROM candidates c LEFT JOIN unnest($4::uuid[], $5::int[]) AS b(webhook_id, n) ON b.webhook_id = c.webhook_id
         ), picked AS (
           SELECT id FROM ranked WHERE rank <= free ORDER BY next_attempt_at LIMIT $2
         ), locked AS (
           SELECT m.id, m.status, m.next_attempt_at FROM webhook_messages m
            WHERE m.id IN (SELECT id FROM picked) AND m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now()
            FOR UPDATE SKIP LOCKED
         ), claimed AS (
           UPDATE webhook_messages m
              SET status = 'attempting', next_attempt_at = now() + $6 * interval '1 millisecond'
             FROM locked l
            WHERE m.id = l.id
           RETURNING m.id, m.webhook_id, m.team_id, m.payload, m.attempts, l.status AS was_status, l.next_attempt_at::text AS was_due
         )
         SELECT * FROM claimed ORDER BY id`,
        [limit * 4, limit, perWebhook, [...busy.keys()], [...busy.values()], leaseMs, own, skip],
      );
    });
    if (!rows.length) return { due: [], stopped: [] };
    let targets: Awaited<ReturnType<WebhookTargetsRepository['targetsOf']>>;
    let unsent: ClaimedRow[];
    try {
      targets = await this.webhooks.targetsOf([...new Set(rows.map((r) => r.webhook_id))]);
      const notEnabled = rows.filter((r) => !targets.has(r.webhook_id));
      const deleted = await this.deleteOfDeletedWebhooks([...new Set(notEnabled.map((r) => r.webhook_id))]);
      unsent = notEnabled.filter((r) => !deleted.has(r.webhook_id));
      if (unsent.length) await this.handBack(unsent);
    } catch (error) {
      throw new StrandedClaimsError(
        rows.map((r) => r.id),
        error,
      );
    }
    const due: DueMessage[] = [];
    for (const r of rows) {
      const target = targets.get(r.webhook_id);
      if (target) due.push({ id: r.id, webhookId: r.webhook_id, teamId: r.team_id, payload: r.payload, attempts: r.attempts, ...target });
    }
    return { due, stopped: [...new Set(unsent.map((r) => r.webhook_id))] };
  }

  /**
   * Deletes every message (and attempt) of those of these webhooks, found not enabled, that no
   * longer exist, and answers them. Their deletion (WebhooksService.remove) deleted the messages
   * there when it ran; these were made meanwhile (fan-out read the webhook before its deletion and
   * inserted after) or left by a crash between the two: no foreign key crosses the planes to
   * refuse or cascade them. A disabled webhook's messages stay, to be delivered once it is enabled
   * again.
   */
  private async deleteOfDeletedWebhooks(notEnabled: readonly string[]): Promise<Set<string>> {
    const existing = await this.webhooks.existingAmong(notEnabled);
    const deleted = notEnabled.filter((id) => !existing.has(id));
    if (deleted.length) await this.db.query(`DELETE FROM webhook_messages WHERE webhook_id = ANY($1::uuid[])`, [deleted]);
    return new Set(deleted);
  }

  /** Undoes the claim of these messages: their status and due time as they were before it. */
  private async handBack(claimed: readonly ClaimedRow[]): Promise<void> {
    await this.db.query(
      `UPDATE webhook_messages m SET status = u.status, next_attempt_at = u.next_attempt_at
         FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(id, status, next_attempt_at)
        WHERE m.id = u.id AND m.status = 'attempting'`,
      [claimed.map((r) => r.id), claimed.map((r) => r.was_status), claimed.map((r) => r.was_due)],
    );
  }

  /**
   * The webhooks with undelivered messages, walked one index probe each (a loose scan of the
   * per-webhook due index), however long their backlogs, a page at a time, each page's webhooks
   * then read as they are now: up to `limit` enabled ones with messages due now, and the disabled
   * ones met, whose messages the claims skip. The messages of a deleted one met are deleted
   * (deleteOfDeletedWebhooks).
   */
  async webhooksWithDueMessages(limit: number): Promise<WebhooksWithMessages> {
    const found: WebhooksWithMessages = { due: [], stopped: [] };
    let after = BEFORE_EVERY_WEBHOOK;
    for (;;) {
      const page: { webhook_id: string; due: boolean }[] = await this.db.query(
        `WITH RECURSIVE hooks(webhook_id) AS (
           (SELECT webhook_id FROM webhook_messages WHERE status IN ('pending', 'attempting') AND webhook_id > $2 ORDER BY webhook_id LIMIT 1)
           UNION ALL
           SELECT (SELECT m.webhook_id FROM webhook_messages m
                    WHERE m.status IN ('pending', 'attempting') AND m.webhook_id > h.webhook_id ORDER BY m.webhook_id LIMIT 1)
             FROM hooks h WHERE h.webhook_id IS NOT NULL
         )
         SELECT h.webhook_id, EXISTS (SELECT 1 FROM webhook_messages m
                                       WHERE m.webhook_id = h.webhook_id AND m.status IN ('pending', 'attempting') AND m.next_attempt_at <= now()) AS due
           FROM hooks h WHERE h.webhook_id IS NOT NULL
          LIMIT $1`,
        [limit, after],
      );
      const enabled = await this.webhooks.enabledAmong(page.map((r) => r.webhook_id));
      const deleted = await this.deleteOfDeletedWebhooks(page.map((r) => r.webhook_id).filter((id) => !enabled.has(id)));
      for (const r of page) {
        if (deleted.has(r.webhook_id)) continue;
        if (!enabled.has(r.webhook_id)) found.stopped.push(r.webhook_id);
        else if (r.due && found.due.length < limit) found.due.push(r.webhook_id);
      }
      if (page.length < limit || found.due.length >= limit) return found;
      after = page.at(-1)!.webhook_id;
    }
  }

  /** Hands claims back unattempted (a dispatcher shutting down): due again at once. */
  async releaseClaims(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`UPDATE webhook_messages SET next_attempt_at = now() WHERE id = ANY($1::text[]) AND status = 'attempting'`, [ids]);
  }
}
