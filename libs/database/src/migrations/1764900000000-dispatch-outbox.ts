import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The send path's dispatch outbox. Each accepted request writes one narrow row per region in
 * email_dispatches, listing its emails, in the transaction that stores them; the row goes once
 * the stream has acknowledged every one of their send commands. A scheduled email has a row of
 * its own, whose id is the email's, until it comes due and is published. Before, the same fact
 * was an UPDATE of each email row itself: a second copy of a ~1.5 KB row and its index entries
 * for every email, which cost Postgres more than storing the email.
 *
 * emails.dispatch_at keeps one job: the worker's lease, set when a worker claims the email and
 * cleared when nothing is left to send; a lease that runs out makes the reconciler dispatch the
 * email again. dispatched_at is gone (a row in email_dispatches, or dispatch_at set, is "not
 * dispatched").
 */
export class DispatchOutbox1764900000000 implements MigrationInterface {
  name = 'DispatchOutbox1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE email_dispatches (
        id uuid PRIMARY KEY,
        region text NOT NULL,
        due_at timestamptz NOT NULL,
        email_ids uuid[] NOT NULL
      )`);
    await q.query(`CREATE INDEX email_dispatches_due_idx ON email_dispatches (region, due_at)`);
    // Emails never claimed and never confirmed published move to the outbox (canceled ones stay out).
    await q.query(`
      INSERT INTO email_dispatches (id, region, due_at, email_ids)
      SELECT id, region, dispatch_at, ARRAY[id] FROM emails
       WHERE dispatched_at IS NULL AND dispatch_count = 0 AND last_event <> 'canceled'`);
    await q.query(`DROP INDEX emails_dispatch_due_idx`);
    await q.query(`ALTER TABLE emails ALTER COLUMN dispatch_at DROP NOT NULL`);
    await q.query(`UPDATE emails SET dispatch_at = NULL WHERE dispatched_at IS NOT NULL OR dispatch_count = 0`);
    await q.query(`ALTER TABLE emails DROP COLUMN dispatched_at`);
    await q.query(`CREATE INDEX emails_lease_due_idx ON emails (region, dispatch_at) WHERE dispatch_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX emails_lease_due_idx`);
    await q.query(`ALTER TABLE emails ADD COLUMN dispatched_at timestamptz`);
    await q.query(`UPDATE emails SET dispatched_at = created_at WHERE dispatch_at IS NULL`);
    await q.query(`
      UPDATE emails e SET dispatched_at = NULL, dispatch_at = d.due_at
        FROM email_dispatches d WHERE e.id = ANY(d.email_ids)`);
    await q.query(`UPDATE emails SET dispatch_at = 'infinity' WHERE dispatch_at IS NULL`);
    await q.query(`ALTER TABLE emails ALTER COLUMN dispatch_at SET NOT NULL`);
    await q.query(`CREATE INDEX emails_dispatch_due_idx ON emails (region, dispatch_at) WHERE dispatched_at IS NULL`);
    await q.query(`DROP TABLE email_dispatches`);
  }
}
