import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Images uploaded in the broadcast editor (issue 18), kept in Postgres beside the broadcasts that
 * show them and served publicly by the api role at /images/:id: recipients' mail clients fetch
 * them, so they outlive any session. The id is random (UUIDv7's 74 random bits): unguessable.
 */
export class EditorImages1765550000000 implements MigrationInterface {
  name = 'EditorImages1765550000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE editor_images (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        content_type text NOT NULL,
        byte_size integer NOT NULL CHECK (byte_size > 0),
        sha256 text NOT NULL,
        content bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX editor_images_team ON editor_images (team_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS editor_images`);
  }
}
