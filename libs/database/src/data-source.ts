import { DataSource, DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from './database.config';
import { migrations } from './migrations';

/**
 * Postgres through TypeORM. The schema changes only through the committed migrations
 * (`synchronize` is off everywhere); the search path pins every query to DATABASE_SCHEMA so
 * test runs can isolate themselves in a schema of their own.
 */
export function dataSourceOptions(config: DatabaseConfig, entities: DataSourceOptions['entities'] = []): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    entities,
    migrations,
    migrationsTableName: 'herald_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: config.DATABASE_POOL_SIZE,
      options: `-c search_path=${config.DATABASE_SCHEMA}`,
      application_name: `herald-${config.HERALD_REGION}`,
      connectionTimeoutMillis: 5000,
    },
  };
}

/** Any constant: every process migrating one database takes the same lock. */
const MIGRATION_LOCK = 0x6865726c; // "herl"

/**
 * Creates the schema if needed and applies every pending migration; returns the names applied.
 * A Postgres advisory lock serialises concurrent runs (several regions' migration jobs, or
 * `herald all` started twice), so each migration runs once.
 */
export async function runMigrations(config: DatabaseConfig): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(config));
  await ds.initialize();
  const lock = ds.createQueryRunner();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await ds.query(`CREATE SCHEMA IF NOT EXISTS "${config.DATABASE_SCHEMA}"`);
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.release();
    await ds.destroy();
  }
}

/** Rows changed by an UPDATE or DELETE run through `query()`: TypeORM answers `[rows, count]`. */
export function affectedRows(result: unknown): number {
  return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
}
