import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a broadcast's recipient unsubscribed through that broadcast's email (the one-click POST,
 * the mailto: or the preference page): `GET /broadcasts/:id/recipients?type=unsubscribed` lists
 * them. The contact's own state stays the contacts context's; this is the broadcast's record.
 */
export class BroadcastUnsubscribes1765560000000 implements MigrationInterface {
  name = 'BroadcastUnsubscribes1765560000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE broadcast_recipients ADD COLUMN unsubscribed_at timestamptz`);
    await q.query(
      `CREATE INDEX broadcast_recipients_unsubscribed_idx ON broadcast_recipients (broadcast_id, email_id) WHERE unsubscribed_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS broadcast_recipients_unsubscribed_idx`);
    await q.query(`ALTER TABLE broadcast_recipients DROP COLUMN IF EXISTS unsubscribed_at`);
  }
}
