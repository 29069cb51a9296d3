import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery engine's state. Each recipient carries its own delivery status, attempts, retry
 * time and the claim of the worker sending to it; the email carries its latest event and a
 * dispatch generation (the Nats-Msg-Id of a republish, so a retry is not taken for a duplicate).
 * email_events is the email's history and the outbox of the events stream: an event is written
 * in the transaction that records the fact, then published; unpublished ones are published again.
 */
export class Delivery1764600000000 implements MigrationInterface {
  name = 'Delivery1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE emails
        ADD COLUMN last_event_at timestamptz,
        ADD COLUMN dispatch_count integer NOT NULL DEFAULT 0`);
    await q.query(`
      ALTER TABLE email_recipients
        ADD COLUMN attempts smallint NOT NULL DEFAULT 0,
        ADD COLUMN next_attempt_at timestamptz,
        ADD COLUMN claimed_until timestamptz,
        ADD COLUMN claim_token uuid,
        ADD COLUMN last_response text,
        ADD COLUMN mx text,
        ADD COLUMN updated_at timestamptz,
        ADD CONSTRAINT email_recipients_status_check
          CHECK (status IN ('queued', 'sending', 'deferred', 'delivered', 'bounced', 'suppressed', 'failed'))`);
    await q.query(`
      CREATE TABLE email_events (
        id uuid PRIMARY KEY,
        email_id uuid NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
        team_id uuid NOT NULL,
        region text NOT NULL,
        type text NOT NULL,
        recipients text[] NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        published_at timestamptz
      )`);
    await q.query(`CREATE INDEX email_events_email_idx ON email_events (email_id, created_at)`);
    await q.query(`CREATE INDEX email_events_unpublished_idx ON email_events (region, created_at) WHERE published_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS email_events`);
    await q.query(`
      ALTER TABLE email_recipients
        DROP CONSTRAINT IF EXISTS email_recipients_status_check,
        DROP COLUMN attempts, DROP COLUMN next_attempt_at, DROP COLUMN claimed_until, DROP COLUMN claim_token,
        DROP COLUMN last_response, DROP COLUMN mx, DROP COLUMN updated_at`);
    await q.query(`ALTER TABLE emails DROP COLUMN last_event_at, DROP COLUMN dispatch_count`);
  }
}
