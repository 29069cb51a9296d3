import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook messages no longer reference their webhook (issue 15): the messages are the email
 * plane's and the webhooks the control plane's, which will be databases of their own. What the
 * foreign key's cascade did is done by the code: deleting a webhook deletes its messages after
 * it (WebhooksService.remove), and the dispatcher deletes the messages it finds of a webhook that
 * no longer exists (one made for it while it was being deleted). Down deletes such messages
 * first, as the key cannot be added back over them.
 */
export class WebhookMessagesUnbound1765626000000 implements MigrationInterface {
  name = 'WebhookMessagesUnbound1765626000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_messages DROP CONSTRAINT webhook_messages_webhook_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhook_messages m WHERE NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = m.webhook_id)`);
    await q.query(`
      ALTER TABLE webhook_messages
        ADD CONSTRAINT webhook_messages_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks(id) ON DELETE CASCADE`);
  }
}
