import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An email a worker postponed for a full destination queue and then called back (its lease made
 * due at once): its next send command says so, and whichever worker of the region takes it
 * admits it, in the place the caller kept for it. The relay clears it as it publishes.
 */
export class DispatchCalled1765615000000 implements MigrationInterface {
  name = 'DispatchCalled1765615000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails ADD COLUMN dispatch_called boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails DROP COLUMN IF EXISTS dispatch_called`);
  }
}
