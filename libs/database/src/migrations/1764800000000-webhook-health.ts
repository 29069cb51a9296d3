import { MigrationInterface, QueryRunner } from 'typeorm';

/** When an endpoint's current streak of failed deliveries began (null while it succeeds): the 5-day rule. */
export class WebhookHealth1764800000000 implements MigrationInterface {
  name = 'WebhookHealth1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN failing_since timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN failing_since`);
  }
}
