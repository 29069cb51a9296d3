import { MigrationInterface, QueryRunner } from 'typeorm';

/** Where the extensions go when this migration creates them: a schema of their own, which no Herald schema's drop takes with it. */
const EXTENSIONS_SCHEMA = 'herald_extensions';

/**
 * The dashboard's suppression search (`q` within an address, any case; SuppressionsRepository
 * listPage): a GIN index of the team and the address's trigrams (pg_trgm, with btree_gin for
 * the uuid), so a search in one team of a list of millions reads that team's matches only.
 * Both extensions ship with PostgreSQL (contrib, in Debian's postgresql-15 and every managed
 * Postgres) and are trusted (a database owner may create them). Extensions belong to the
 * database, not to a schema: when one exists already its schema is used as it is. Where they
 * cannot be had, a btree on the address's start (text_pattern_ops) serves searches by the start
 * of an address, and a search within one reads the team's list.
 */
export class SuppressionSearch1765501000000 implements MigrationInterface {
  name = 'SuppressionSearch1765501000000';

  async up(q: QueryRunner): Promise<void> {
    const schemas = await this.extensionSchemas(q);
    if (schemas) {
      await q.query(
        `CREATE INDEX suppressions_team_email_trgm_idx ON suppressions USING gin (team_id "${schemas.btree_gin}".uuid_ops, email "${schemas.pg_trgm}".gin_trgm_ops)`,
      );
    } else {
      await q.query(`CREATE INDEX suppressions_team_email_prefix_idx ON suppressions (team_id, email text_pattern_ops)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS suppressions_team_email_trgm_idx`);
    await q.query(`DROP INDEX IF EXISTS suppressions_team_email_prefix_idx`);
  }

  /** The schema of each extension, created if need be; null if this Postgres cannot have them. */
  private async extensionSchemas(q: QueryRunner): Promise<{ pg_trgm: string; btree_gin: string } | null> {
    const names = ['pg_trgm', 'btree_gin'] as const;
    const available: { name: string }[] = await q.query(`SELECT name FROM pg_available_extensions WHERE name = ANY($1)`, [names]);
    if (available.length < names.length) return null;
    // Extensions are the database's, shared by every schema migrated at once (test suites in
    // parallel, replicas starting together): one creator at a time, or the loser of the race
    // would fail its CREATE and take the fallback index.
    await q.query(`SELECT pg_advisory_xact_lock(hashtext('${EXTENSIONS_SCHEMA}'))`);
    // A refusal (no CREATE privilege on the database) must not abort the migration's transaction.
    await q.query('SAVEPOINT herald_extensions');
    try {
      await q.query(`CREATE SCHEMA IF NOT EXISTS ${EXTENSIONS_SCHEMA}`);
      for (const name of names) await q.query(`CREATE EXTENSION IF NOT EXISTS ${name} SCHEMA ${EXTENSIONS_SCHEMA}`);
      await q.query('RELEASE SAVEPOINT herald_extensions');
    } catch {
      await q.query('ROLLBACK TO SAVEPOINT herald_extensions');
      return null;
    }
    const rows: { name: string; schema: string }[] = await q.query(
      `SELECT e.extname AS name, n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ANY($1)`,
      [names],
    );
    const schemaOf = (name: string) => rows.find((r) => r.name === name)!.schema;
    return { pg_trgm: schemaOf('pg_trgm'), btree_gin: schemaOf('btree_gin') };
  }
}
