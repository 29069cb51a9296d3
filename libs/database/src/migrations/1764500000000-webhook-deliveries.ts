import { MigrationInterface, QueryRunner } from 'typeorm';

/** One message per webhook × event (the dedupe key of fan-out) and every delivery attempt of it. */
export class WebhookDeliveries1764500000000 implements MigrationInterface {
  name = 'WebhookDeliveries1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_messages (
        id text PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        team_id uuid NOT NULL,
        event_id text NOT NULL,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'attempting', 'success', 'failed')),
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (webhook_id, event_id)
      )`);
    // The dispatcher's poll: only undelivered messages are indexed.
    await q.query(`CREATE INDEX webhook_messages_due_idx ON webhook_messages (next_attempt_at) WHERE status IN ('pending', 'attempting')`);
    await q.query(`CREATE INDEX webhook_messages_webhook_created_idx ON webhook_messages (webhook_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE webhook_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        message_id text NOT NULL REFERENCES webhook_messages(id) ON DELETE CASCADE,
        attempt int NOT NULL,
        status_code int NULL,
        error text NULL,
        response_excerpt text NOT NULL DEFAULT '',
        duration_ms int NOT NULL,
        sent_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX webhook_attempts_message_idx ON webhook_attempts (message_id, attempt)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhook_attempts`);
    await q.query(`DROP TABLE IF EXISTS webhook_messages`);
  }
}
