import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Broadcasts (issue 18, API.md §11): a message to a segment's contacts, sent as one email per
 * contact. The fan-out keeps its place in `cursor` (the last contact id it wrote emails for),
 * advanced in the transaction that commits each chunk's emails, and holds the broadcast with a
 * lease (`lease_until`) so one process fans it out at a time and another takes over when it dies.
 * `broadcast_recipients` is the belt: one row per (broadcast, contact), written with the email,
 * and the way an unsubscribe token (which names the email) finds its contact. Segment, topic and
 * contact ids carry no foreign key: a broadcast outlives a deleted segment as a record of what
 * was sent.
 */
export class Broadcasts1765545000000 implements MigrationInterface {
  name = 'Broadcasts1765545000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE broadcasts (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        name text,
        segment_id uuid,
        topic_id uuid,
        from_address text NOT NULL,
        subject text NOT NULL,
        reply_to text[],
        preview_text text,
        html text,
        text_body text,
        document jsonb,
        status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'queued', 'sending', 'sent', 'cancelled')),
        scheduled_at timestamptz,
        sent_at timestamptz,
        cursor uuid,
        lease_until timestamptz,
        recipients integer NOT NULL DEFAULT 0,
        skipped_unsubscribed integer NOT NULL DEFAULT 0,
        skipped_topic integer NOT NULL DEFAULT 0,
        skipped_suppressed integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX broadcasts_team_idx ON broadcasts (team_id, created_at DESC, id DESC)`);
    // The runner's query: what is due or being fanned out.
    await q.query(
      `CREATE INDEX broadcasts_due_idx ON broadcasts (coalesce(scheduled_at, created_at)) WHERE status IN ('scheduled', 'queued', 'sending')`,
    );
    await q.query(`
      CREATE TABLE broadcast_recipients (
        broadcast_id uuid NOT NULL REFERENCES broadcasts(id) ON DELETE CASCADE,
        contact_id uuid NOT NULL,
        email_id uuid NOT NULL UNIQUE,
        team_id uuid NOT NULL,
        PRIMARY KEY (broadcast_id, contact_id)
      )`);
    await q.query(`ALTER TABLE emails ADD COLUMN broadcast_id uuid`);
    await q.query(`CREATE INDEX emails_broadcast_idx ON emails (broadcast_id) WHERE broadcast_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails DROP COLUMN IF EXISTS broadcast_id`);
    await q.query(`DROP TABLE IF EXISTS broadcast_recipients`);
    await q.query(`DROP TABLE IF EXISTS broadcasts`);
  }
}
