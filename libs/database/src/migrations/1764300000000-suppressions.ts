import { MigrationInterface, QueryRunner } from 'typeorm';

export class Suppressions1764300000000 implements MigrationInterface {
  name = 'Suppressions1764300000000';

  async up(q: QueryRunner): Promise<void> {
    // One entry per team and address; `email` is stored lowercased (the whole address), so the
    // unique key and lookups by address are case-insensitive.
    await q.query(`
      CREATE TABLE suppressions (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        email text NOT NULL CHECK (email = lower(email)),
        origin text NOT NULL CHECK (origin IN ('bounce', 'complaint', 'manual')),
        source_id uuid,
        reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (team_id, email)
      )`);
    await q.query(`CREATE INDEX suppressions_team_idx ON suppressions (team_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS suppressions`);
  }
}
