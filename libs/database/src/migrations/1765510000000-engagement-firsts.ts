import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Open and click tracking (issue 14): the first open of each recipient, and the first click of
 * each link by each recipient, human and machine apart. A hit is `unique` when it is the one
 * stored here; the primary key settles two hits racing (INSERT … ON CONFLICT DO NOTHING).
 */
export class EngagementFirsts1765510000000 implements MigrationInterface {
  name = 'EngagementFirsts1765510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE email_engagement_firsts (
        email_id uuid NOT NULL REFERENCES emails (id) ON DELETE CASCADE,
        position int NOT NULL,
        kind text NOT NULL CHECK (kind IN ('open', 'click')),
        link int NOT NULL,
        machine boolean NOT NULL,
        hit_id uuid NOT NULL,
        at timestamptz NOT NULL,
        PRIMARY KEY (email_id, position, kind, link, machine)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS email_engagement_firsts`);
  }
}
