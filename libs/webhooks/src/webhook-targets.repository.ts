import { DataSource } from 'typeorm';

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

/**
 * The webhooks as delivery reads them. They are the control plane's, and webhook messages the
 * email plane's (libs/database planes.ts), which issue 15 puts in databases of their own: so they
 * are read here in statements of their own, never beside webhook_messages, and what is found is
 * passed to the messages' statements as parameters. Each read is of the webhooks as they are
 * now (a disabling, a deletion or a secret rotation counts from the next read), and answers only
 * enabled webhooks: a disabled or deleted one is absent.
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
}
