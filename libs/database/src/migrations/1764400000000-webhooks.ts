import { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1764400000000 implements MigrationInterface {
  name = 'Webhooks1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        endpoint text NOT NULL,
        events text[] NOT NULL,
        status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
        signing_secret text NOT NULL,
        previous_secret text NULL,
        previous_secret_expires_at timestamptz NULL,
        disabled_reason text NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_team_created_idx ON webhooks (team_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhooks`);
  }
}
