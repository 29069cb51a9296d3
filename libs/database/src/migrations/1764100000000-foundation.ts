import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1764100000000 implements MigrationInterface {
  name = 'Foundation1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE teams (
        id uuid PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        home_region text NOT NULL,
        plan text NOT NULL,
        rate_limit integer CHECK (rate_limit > 0),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 50),
        permission text NOT NULL CHECK (permission IN ('full_access', 'sending_access')),
        domain_id uuid,
        public_id text NOT NULL UNIQUE,
        secret_hash bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_team_idx ON api_keys (team_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE emails (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        region text NOT NULL,
        source text NOT NULL CHECK (source IN ('api', 'smtp')),
        from_address text NOT NULL,
        to_addresses text[] NOT NULL,
        cc_addresses text[],
        bcc_addresses text[],
        reply_to text[],
        subject text NOT NULL,
        html text,
        text_body text,
        headers jsonb,
        tags jsonb,
        message_id text NOT NULL,
        last_event text NOT NULL,
        scheduled_at timestamptz,
        dispatch_at timestamptz NOT NULL,
        dispatched_at timestamptz,
        idempotency_key text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX emails_team_created_idx ON emails (team_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX emails_dispatch_due_idx ON emails (region, dispatch_at) WHERE dispatched_at IS NULL`);
    await q.query(`
      CREATE TABLE email_recipients (
        email_id uuid NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
        position smallint NOT NULL,
        kind text NOT NULL CHECK (kind IN ('to', 'cc', 'bcc')),
        address text NOT NULL,
        status text NOT NULL DEFAULT 'queued',
        PRIMARY KEY (email_id, position)
      )`);
    await q.query(`
      CREATE TABLE email_attachments (
        email_id uuid NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
        position smallint NOT NULL,
        filename text,
        content_type text,
        content_id text,
        path text,
        content bytea,
        size integer NOT NULL,
        PRIMARY KEY (email_id, position)
      )`);
    await q.query(`
      CREATE TABLE idempotency_records (
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        endpoint text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        status_code integer NOT NULL,
        response jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (team_id, endpoint, key)
      )`);
    await q.query(`CREATE INDEX idempotency_records_created_idx ON idempotency_records (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['idempotency_records', 'email_attachments', 'email_recipients', 'emails', 'api_keys', 'teams']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
