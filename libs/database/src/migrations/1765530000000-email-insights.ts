import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The content insights of an email (issue 14), computed once, the first time they are asked for,
 * and kept: the same email answers the same findings later, whatever its domain's settings or
 * DNS become. Outcome insights are not stored: they are read from the email's events.
 */
export class EmailInsights1765530000000 implements MigrationInterface {
  name = 'EmailInsights1765530000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE email_insights (
        email_id uuid PRIMARY KEY REFERENCES emails(id) ON DELETE CASCADE,
        team_id uuid NOT NULL,
        content jsonb NOT NULL,
        computed_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS email_insights`);
  }
}
