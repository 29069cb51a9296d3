import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which API key sent an email (REST or the SMTP relay), for the dashboard's API-key filter.
 * A nullable column without a default: Postgres adds it to the catalog only, without rewriting
 * the table; emails sent before it (and Herald's own mail) keep NULL. No foreign key: a key is
 * deleted when revoked while its emails stay, and the send path pays no lookup per email.
 * The index keeps the feed's keyset order (team, newest first); partial, so the rows from
 * before the column are not in it and building it reads the table once without writing them.
 */
export class EmailApiKey1765500000000 implements MigrationInterface {
  name = 'EmailApiKey1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails ADD COLUMN api_key_id uuid`);
    await q.query(`CREATE INDEX emails_team_api_key_idx ON emails (team_id, api_key_id, created_at DESC, id DESC) WHERE api_key_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS emails_team_api_key_idx`);
    await q.query(`ALTER TABLE emails DROP COLUMN IF EXISTS api_key_id`);
  }
}
