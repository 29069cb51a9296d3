import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The people of the dashboard (issue 13). The `users`, `user_*` tables are better-auth's models
 * under Herald's names (libs/people/src/auth-schema.ts maps them): better-auth reads and writes
 * them through its Kysely adapter, but only this migration creates them. A team's members, its
 * invitations and the audit log are Herald's own.
 */
export class People1765300000000 implements MigrationInterface {
  name = 'People1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id text PRIMARY KEY,
        name text NOT NULL,
        email text NOT NULL UNIQUE,
        email_verified boolean NOT NULL,
        image text,
        two_factor_enabled boolean,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE user_sessions (
        id text PRIMARY KEY,
        token text NOT NULL UNIQUE,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        ip_address text,
        user_agent text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX user_sessions_user_idx ON user_sessions (user_id)`);
    await q.query(`
      CREATE TABLE user_accounts (
        id text PRIMARY KEY,
        account_id text NOT NULL,
        provider_id text NOT NULL,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        access_token text,
        refresh_token text,
        id_token text,
        access_token_expires_at timestamptz,
        refresh_token_expires_at timestamptz,
        scope text,
        password text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX user_accounts_user_idx ON user_accounts (user_id)`);
    await q.query(`CREATE UNIQUE INDEX user_accounts_provider_idx ON user_accounts (provider_id, account_id)`);
    await q.query(`
      CREATE TABLE user_verifications (
        id text PRIMARY KEY,
        identifier text NOT NULL,
        value text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX user_verifications_identifier_idx ON user_verifications (identifier)`);
    await q.query(`
      CREATE TABLE user_two_factors (
        id text PRIMARY KEY,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        secret text NOT NULL,
        backup_codes text NOT NULL,
        verified boolean,
        failed_verification_count integer,
        locked_until timestamptz
      )`);
    await q.query(`CREATE INDEX user_two_factors_user_idx ON user_two_factors (user_id)`);
    await q.query(`CREATE INDEX user_two_factors_secret_idx ON user_two_factors (secret)`);
    await q.query(`
      CREATE TABLE user_passkeys (
        id text PRIMARY KEY,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text,
        public_key text NOT NULL,
        credential_id text NOT NULL,
        counter integer NOT NULL,
        device_type text NOT NULL,
        backed_up boolean NOT NULL,
        transports text,
        aaguid text,
        created_at timestamptz
      )`);
    await q.query(`CREATE INDEX user_passkeys_user_idx ON user_passkeys (user_id)`);
    await q.query(`CREATE INDEX user_passkeys_credential_idx ON user_passkeys (credential_id)`);
    await q.query(`
      CREATE TABLE team_members (
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (team_id, user_id)
      )`);
    await q.query(`CREATE INDEX team_members_user_idx ON team_members (user_id)`);
    await q.query(`
      CREATE TABLE team_invitations (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'member')),
        token_hash text NOT NULL UNIQUE,
        invited_by text REFERENCES users(id) ON DELETE SET NULL,
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX team_invitations_team_idx ON team_invitations (team_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE audit_log (
        id uuid PRIMARY KEY,
        team_id uuid REFERENCES teams(id) ON DELETE CASCADE,
        user_id text REFERENCES users(id) ON DELETE SET NULL,
        actor_email text,
        action text NOT NULL,
        ip text,
        user_agent text,
        detail jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX audit_log_team_idx ON audit_log (team_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_log_user_idx ON audit_log (user_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'audit_log',
      'team_invitations',
      'team_members',
      'user_passkeys',
      'user_two_factors',
      'user_verifications',
      'user_accounts',
      'user_sessions',
      'users',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
