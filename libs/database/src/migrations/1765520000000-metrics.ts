import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Metrics (issue 14): hourly rollups per team × sending domain × region, counted from the
 * events streams, and the reputation guardrail's pause of a domain.
 *
 * - metric_rollups: one row per (team, domain name, region, hour), counters only: integers (an
 *   hour of one domain stays far below 2^31, and summing integers is Postgres' fast path). The
 *   domain is the `from` domain's name (names are unique across teams), so rollups need no lookup
 *   per event and survive a domain deleted and added again.
 * - counted_events: the id of every event already in the rollups, inserted in the transaction
 *   that adds it, so a redelivered or replayed event is counted once. Rows older than the events
 *   stream's retention (7 days) can no longer be replayed and are purged.
 * - domains.paused_at / pause: set by the guardrail, cleared by an owner's resume; resumed_at:
 *   the guardrail judges a resumed domain only on what it sent after the resume.
 */
export class Metrics1765520000000 implements MigrationInterface {
  name = 'Metrics1765520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE metric_rollups (
        team_id uuid NOT NULL,
        domain text NOT NULL,
        region text NOT NULL,
        hour timestamptz NOT NULL,
        sent integer NOT NULL DEFAULT 0,
        delivered integer NOT NULL DEFAULT 0,
        delivery_delayed integer NOT NULL DEFAULT 0,
        bounced_hard integer NOT NULL DEFAULT 0,
        bounced_soft integer NOT NULL DEFAULT 0,
        complained integer NOT NULL DEFAULT 0,
        suppressed integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        opened_human integer NOT NULL DEFAULT 0,
        opened_human_unique integer NOT NULL DEFAULT 0,
        opened_machine integer NOT NULL DEFAULT 0,
        opened_machine_unique integer NOT NULL DEFAULT 0,
        clicked_human integer NOT NULL DEFAULT 0,
        clicked_human_unique integer NOT NULL DEFAULT 0,
        clicked_machine integer NOT NULL DEFAULT 0,
        clicked_machine_unique integer NOT NULL DEFAULT 0,
        PRIMARY KEY (team_id, domain, hour, region)
      )`);
    // The key leads with team, domain and hour: GET /stats of one domain reads its range of hours.
    // Without a domain filter, a team's hours in a range:
    await q.query(`CREATE INDEX metric_rollups_team_hour_idx ON metric_rollups (team_id, hour)`);
    await q.query(`
      CREATE TABLE counted_events (
        event_id text PRIMARY KEY,
        counted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX counted_events_counted_at_idx ON counted_events (counted_at)`);
    await q.query(`ALTER TABLE domains ADD COLUMN paused_at timestamptz, ADD COLUMN pause jsonb, ADD COLUMN resumed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE domains DROP COLUMN paused_at, DROP COLUMN pause, DROP COLUMN resumed_at`);
    await q.query(`DROP TABLE IF EXISTS counted_events`);
    await q.query(`DROP TABLE IF EXISTS metric_rollups`);
  }
}
