import { Injectable } from '@nestjs/common';
import { keysetPage } from '@herald/database';
import { DataSource } from 'typeorm';
import type { WebhookPage } from './webhook-input.validation';
import type { Webhook, WebhookEventType, WebhookStatus } from './webhook.types';

interface WebhookRow {
  id: string;
  team_id: string;
  endpoint: string;
  events: WebhookEventType[];
  status: WebhookStatus;
  signing_secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
}

export type NewWebhook = Pick<Webhook, 'id' | 'teamId' | 'endpoint' | 'events' | 'signingSecret'>;
export type WebhookChanges = Partial<Pick<Webhook, 'endpoint' | 'events' | 'status'>>;

const COLUMNS = `id, team_id, endpoint, events, status, signing_secret, previous_secret, previous_secret_expires_at,
  disabled_reason, created_at`;

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    teamId: row.team_id,
    endpoint: row.endpoint,
    events: row.events,
    status: row.status,
    signingSecret: row.signing_secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
  };
}

/** A team's webhook endpoints. Every method takes the team first. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: DataSource) {}

  async create(webhook: NewWebhook): Promise<Webhook> {
    const [row]: WebhookRow[] = await this.db.query(
      `INSERT INTO webhooks (id, team_id, endpoint, events, signing_secret) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [webhook.id, webhook.teamId, webhook.endpoint, webhook.events, webhook.signingSecret],
    );
    return toWebhook(row!);
  }

  async get(teamId: string, id: string): Promise<Webhook | null> {
    const [row]: WebhookRow[] = await this.db.query(`SELECT ${COLUMNS} FROM webhooks WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return row ? toWebhook(row) : null;
  }

  /** Newest first; `after` pages toward older ones, `before` toward newer. */
  async listPage(teamId: string, page: WebhookPage): Promise<{ items: Webhook[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<WebhookRow>(this.db, { table: 'webhooks', columns: COLUMNS, teamId }, page);
    return { items: rows.map(toWebhook), hasMore };
  }

  /** Null when the team has no such webhook. Enabling clears the reason Herald disabled it for. */
  async update(teamId: string, id: string, changes: WebhookChanges): Promise<Webhook | null> {
    const [rows]: [WebhookRow[], number] = await this.db.query(
      `UPDATE webhooks SET
         endpoint = coalesce($3, endpoint),
         events = coalesce($4::text[], events),
         status = coalesce($5, status),
         disabled_reason = CASE WHEN $5 IS NULL THEN disabled_reason ELSE NULL END
       WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [teamId, id, changes.endpoint ?? null, changes.events ?? null, changes.status ?? null],
    );
    const row = rows[0];
    return row ? toWebhook(row) : null;
  }

  /** Makes `secret` current; the current one stays valid until `previousExpiresAt`. */
  async rotateSecret(teamId: string, id: string, secret: string, previousExpiresAt: Date): Promise<Webhook | null> {
    const [rows]: [WebhookRow[], number] = await this.db.query(
      `UPDATE webhooks SET previous_secret = signing_secret, previous_secret_expires_at = $4, signing_secret = $3
       WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [teamId, id, secret, previousExpiresAt],
    );
    const row = rows[0];
    return row ? toWebhook(row) : null;
  }

  async delete(teamId: string, id: string): Promise<Webhook | null> {
    const [rows]: [WebhookRow[], number] = await this.db.query(`DELETE FROM webhooks WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
      teamId,
      id,
    ]);
    const row = rows[0];
    return row ? toWebhook(row) : null;
  }
}
