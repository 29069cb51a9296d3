import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Before this release the reconciler cleared emails.dispatch_at when it republished an expired
 * lease; when JetStream dropped that publish as a duplicate, the email was left with recipients
 * 'sending' or 'deferred' and nothing to dispatch it again. Such emails get a lease due now, so
 * the reconciler publishes them once more (the worker's claim keeps a recipient already
 * delivered from being sent again).
 */
export class StrandedLeases1765200000000 implements MigrationInterface {
  name = 'StrandedLeases1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE emails SET dispatch_at = now()
       WHERE dispatch_at IS NULL AND last_event <> 'canceled'
         AND id IN (SELECT email_id FROM email_recipients WHERE status IN ('sending', 'deferred'))`);
  }

  async down(): Promise<void> {
    // Nothing to undo: a due lease is the state these emails should have had.
  }
}
