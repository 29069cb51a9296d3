import { MigrationInterface, QueryRunner } from 'typeorm';

export class Domains1764200000000 implements MigrationInterface {
  name = 'Domains1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE domains (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        name text NOT NULL,
        region text NOT NULL,
        status text NOT NULL DEFAULT 'not_started'
          CHECK (status IN ('not_started', 'pending', 'verified', 'partially_verified', 'partially_failed', 'failed', 'temporary_failure')),
        custom_return_path text NOT NULL DEFAULT 'send',
        open_tracking boolean NOT NULL DEFAULT false,
        click_tracking boolean NOT NULL DEFAULT false,
        tracking_subdomain text,
        tls text NOT NULL DEFAULT 'opportunistic' CHECK (tls IN ('opportunistic', 'enforced')),
        records jsonb NOT NULL DEFAULT '[]',
        dmarc jsonb,
        verification_started_at timestamptz,
        verified_at timestamptz,
        last_checked_at timestamptz,
        next_check_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // A domain belongs to one team across all of Herald (another team gets 403).
    await q.query(`CREATE UNIQUE INDEX domains_name_key ON domains (lower(name))`);
    await q.query(`CREATE INDEX domains_team_idx ON domains (team_id, created_at DESC)`);
    await q.query(`CREATE INDEX domains_next_check_idx ON domains (next_check_at) WHERE next_check_at IS NOT NULL`);
    await q.query(`
      CREATE TABLE dkim_keys (
        id uuid PRIMARY KEY,
        domain_id uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
        selector text NOT NULL,
        algorithm text NOT NULL CHECK (algorithm IN ('rsa-sha256', 'ed25519-sha256')),
        public_key text NOT NULL,
        private_key bytea NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'active', 'retiring', 'retired')),
        dns_status text NOT NULL DEFAULT 'not_started',
        created_at timestamptz NOT NULL DEFAULT now(),
        activated_at timestamptz,
        retired_at timestamptz,
        UNIQUE (domain_id, selector)
      )`);
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_domain_fk FOREIGN KEY (domain_id) REFERENCES domains(id) ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_domain_fk`);
    await q.query(`DROP TABLE IF EXISTS dkim_keys`);
    await q.query(`DROP TABLE IF EXISTS domains`);
  }
}
