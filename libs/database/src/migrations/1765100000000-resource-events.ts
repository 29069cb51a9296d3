import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox of domain and suppression events. Each event is written in the transaction that
 * changes the domain or the suppression list, so that a crash or a NATS outage between the
 * commit and the publish no longer loses it: published_at stays empty until the stream has it,
 * and a relay publishes what stayed unpublished. The partial index holds only those rows.
 */
export class ResourceEvents1765100000000 implements MigrationInterface {
  name = 'ResourceEvents1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE resource_events (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL,
        region text NOT NULL,
        type text NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        published_at timestamptz
      )`);
    await q.query(`CREATE INDEX resource_events_unpublished_idx ON resource_events (region, created_at) WHERE published_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE resource_events`);
  }
}
