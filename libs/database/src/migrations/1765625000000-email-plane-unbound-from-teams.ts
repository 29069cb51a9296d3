import { MigrationInterface, QueryRunner } from 'typeorm';

/** The email-plane tables whose rows named their team through a foreign key to `teams`. */
const BOUND_TO_TEAMS = ['emails', 'email_templates', 'idempotency_records'];

/**
 * The email plane's tables no longer point at `teams` with a foreign key: once a region's email
 * plane has its own database (issue 15, libs/database planes.ts), `teams` is in the control
 * plane's, and a region's database has no team rows to point at. Their `ON DELETE CASCADE` did
 * nothing Herald relied on: teams are never deleted. `idempotency_records` joins the email plane
 * here (planes.ts): a record commits in its emails' transaction, so it lives in their region.
 */
export class EmailPlaneUnboundFromTeams1765625000000 implements MigrationInterface {
  name = 'EmailPlaneUnboundFromTeams1765625000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of BOUND_TO_TEAMS) await q.query(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_team_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of BOUND_TO_TEAMS) {
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams(id) ON DELETE CASCADE`);
    }
  }
}
