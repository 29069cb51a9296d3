import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The due webhook messages of one webhook, oldest first: the dispatcher's claim reads each webhook
 * it is delivering to by this index (besides the oldest due messages overall), so a webhook whose
 * endpoint keeps up is not held back to the pace of another's older backlog.
 */
export class WebhookDuePerEndpoint1765610000000 implements MigrationInterface {
  name = 'WebhookDuePerEndpoint1765610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX webhook_messages_webhook_due_idx ON webhook_messages (webhook_id, next_attempt_at) WHERE status IN ('pending', 'attempting')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_messages_webhook_due_idx`);
  }
}
