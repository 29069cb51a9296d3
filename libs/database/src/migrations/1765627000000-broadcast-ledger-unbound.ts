import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * broadcast_recipients (the email plane's, written in each email's transaction) loses its foreign
 * key to broadcasts (the control plane's): once the planes are in different databases (issue 15)
 * no key can span them. Its ON DELETE CASCADE had nothing to delete: a broadcast is deleted only
 * as a draft or cancelled (BroadcastsRepository.remove), a draft has never been fanned out, and
 * only a scheduled broadcast whose fan-out has not begun can be cancelled (cancel's `status =
 * 'scheduled'`; the fan-out's claim makes it `sending` first, and nothing makes it `scheduled`
 * again), so neither has a ledger row. A team's broadcasts went with the team, and their ledger
 * rows with them; Herald deletes no team, and a team's email-plane rows (its emails too, whose
 * team key still crosses the planes) are issue 15's to remove region by region. The down deletes
 * ledger rows whose broadcast is gone before it puts the key back.
 */
export class BroadcastLedgerUnbound1765627000000 implements MigrationInterface {
  name = 'BroadcastLedgerUnbound1765627000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE broadcast_recipients DROP CONSTRAINT IF EXISTS broadcast_recipients_broadcast_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM broadcast_recipients r WHERE NOT EXISTS (SELECT 1 FROM broadcasts b WHERE b.id = r.broadcast_id)`);
    await q.query(`
      ALTER TABLE broadcast_recipients
        ADD CONSTRAINT broadcast_recipients_broadcast_id_fkey FOREIGN KEY (broadcast_id) REFERENCES broadcasts(id) ON DELETE CASCADE`);
  }
}
