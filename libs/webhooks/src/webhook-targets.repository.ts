import { DataSource, type EntityManager } from 'typeorm';

/** An enabled webhook and the event types it subscribes to (what fan-out matches events against). */
export interface WebhookSubscription {
  id: string;
  teamId: string;
  events: readonly string[];
}

/** What a delivery needs of its webhook. */
export interface WebhookTarget {
  endpoint: string;
  signingSecret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** One delivery outcome's effect on its webhook's health. */
export type HealthTick = { kind: 'success' } | { kind: 'failure'; sentAt: Date } | { kind: 'disable'; reason: string };

/**
 * The webhooks as delivery reads them, and the health it keeps of them. They are the control
 * plane's, and webhook messages the email plane's (libs/database planes.ts), which issue 15 puts
 * in databases of their own: so they are read and written here in statements and transactions of
 * their own, never beside webhook_messages, and what is found is passed to the messages'
 * statements as parameters. Each read is of the webhooks as they are now (a disabling, a deletion
 * or a secret rotation counts from the next read), and answers only enabled webhooks: a disabled
 * or deleted one is absent (existingAmong tells the two apart).
 */
export class WebhookTargetsRepository {
  constructor(private readonly db: DataSource) {}

  /** The enabled webhooks of these teams. */
  async subscriptionsOf(teamIds: readonly string[]): Promise<WebhookSubscription[]> {
    const rows: { id: string; team_id: string; events: string[] }[] = await this.db.query(
      `SELECT id, team_id, events FROM webhooks WHERE team_id = ANY($1::uuid[]) AND status = 'enabled'`,
      [teamIds],
    );
    return rows.map((r) => ({ id: r.id, teamId: r.team_id, events: r.events }));
  }

  /** The endpoint and secrets of each of these webhooks that is enabled. */
  async targetsOf(ids: readonly string[]): Promise<Map<string, WebhookTarget>> {
    const rows: {
      id: string;
      endpoint: string;
      signing_secret: string;
      previous_secret: string | null;
      previous_secret_expires_at: Date | null;
    }[] = await this.db.query(
      `SELECT id, endpoint, signing_secret, previous_secret, previous_secret_expires_at
         FROM webhooks WHERE id = ANY($1::uuid[]) AND status = 'enabled'`,
      [ids],
    );
    return new Map(
      rows.map((r) => [
        r.id,
        {
          endpoint: r.endpoint,
          signingSecret: r.signing_secret,
          previousSecret: r.previous_secret,
          previousSecretExpiresAt: r.previous_secret_expires_at,
        },
      ]),
    );
  }

  /** Which of these webhooks are enabled. */
  async enabledAmong(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows: { id: string }[] = await this.db.query(`SELECT id FROM webhooks WHERE id = ANY($1::uuid[]) AND status = 'enabled'`, [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /** Which of these webhooks exist, enabled or not: one absent was deleted (ids are never reused). */
  async existingAmong(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows: { id: string }[] = await this.db.query(`SELECT id FROM webhooks WHERE id = ANY($1::uuid[])`, [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Applies each webhook's ticks in their order, in one transaction: a success clears the failing
   * streak; a failure starts one at its `sentAt` (or continues it) and disables the webhook once
   * the streak is `disableAfterMs` old; a disable disables it at once. Only an enabled webhook's
   * health changes. Webhooks in id order, so two batches lock the rows they share in the same
   * order; those with successes only in one statement.
   */
  async recordHealth(ticks: ReadonlyMap<string, readonly HealthTick[]>, disableAfterMs: number): Promise<void> {
    const ids = [...ticks.keys()].sort();
    if (!ids.length) return;
    const onlySuccesses = ids.filter((id) => ticks.get(id)!.every((tick) => tick.kind === 'success'));
    await this.db.transaction(async (tx) => {
      if (onlySuccesses.length > 0) {
        await tx.query(`UPDATE webhooks SET failing_since = NULL WHERE id = ANY($1::uuid[]) AND failing_since IS NOT NULL`, [onlySuccesses]);
      }
      for (const id of ids) {
        if (onlySuccesses.includes(id)) continue;
        for (const tick of ticks.get(id)!) await applyTick(tx, id, tick, disableAfterMs);
      }
    });
  }
}

async function applyTick(tx: EntityManager, id: string, tick: HealthTick, disableAfterMs: number): Promise<void> {
  if (tick.kind === 'disable') {
    await tx.query(`UPDATE webhooks SET status = 'disabled', disabled_reason = $2 WHERE id = $1 AND status = 'enabled'`, [id, tick.reason]);
  } else if (tick.kind === 'success') {
    await tx.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [id]);
  } else {
    await tx.query(
      `UPDATE webhooks
          SET failing_since = coalesce(failing_since, $2),
              status = CASE WHEN coalesce(failing_since, $2) <= now() - $3::float8 * interval '1 millisecond' THEN 'disabled' ELSE status END,
              disabled_reason = CASE WHEN coalesce(failing_since, $2) <= now() - $3::float8 * interval '1 millisecond'
                                     THEN 'every delivery failed for ' || round(($3::float8 / 3600000)::numeric, 1) || ' hours' ELSE disabled_reason END
        WHERE id = $1 AND status = 'enabled'`,
      [id, tick.sentAt, disableAfterMs],
    );
  }
}
