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
      onConnect: guardConnection,
    },
  };
}

/**
 * Gives a new pooled Postgres connection an `error` listener for its whole life (pg-pool's
 * `onConnect`). pg-pool removes its own listener when it hands a connection out, and TypeORM adds
 * its own a microtask later; an error emitted between the two had no listener and ended the
 * process. That happens when Postgres dies under load: a backend's FATAL "terminating connection
 * due to unexpected postmaster exit" arrives in the same read as the ReadyForQuery that completed
 * the connect, and is parsed before any microtask runs (fault scenario 15 lost a role this way,
 * the API in one run, the worker or webhooks in others). The connection is marked unqueryable
 * either way: its next statement fails as Postgres unreachable, and the pool drops it on release.
 * The listener logs nothing: the pool's and the query runner's listeners report what they see.
 */
export function guardConnection(connection: { on(event: 'error', listener: (error: Error) => void): unknown }): void {
  connection.on('error', () => undefined);
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

/** One Postgres database of a deployment, and what it holds: `control`, or a region's email plane. */
export interface HeraldDatabase {
  url: string;
  holds: string[];
}

/**
 * The deployment's databases: the control plane's (CONTROL_DATABASE_URL, else DATABASE_URL) and
 * each served region's email plane (REGION_DATABASE_URLS, else DATABASE_URL), one entry per
 * database however many of them it holds. A single database holds everything by default.
 */
export function heraldDatabases(config: DatabaseConfig): HeraldDatabase[] {
  const byUrl = new Map<string, HeraldDatabase>();
  const add = (url: string, what: string) => {
    const key = new URL(url).href;
    const database = byUrl.get(key) ?? { url, holds: [] };
    database.holds.push(what);
    byUrl.set(key, database);
  };
  add(config.CONTROL_DATABASE_URL ?? config.DATABASE_URL, 'control');
  for (const region of config.HERALD_REGIONS) add(config.REGION_DATABASE_URLS[region] ?? config.DATABASE_URL, region);
  return [...byUrl.values()];
}

/**
 * Every database of the deployment migrated (heraldDatabases), each under its own advisory lock,
 * one after another: each gets the whole schema, so a region's database can take over the control
 * plane's tables and the other way round without a second kind of migration.
 */
export async function migrateAll(config: DatabaseConfig): Promise<(HeraldDatabase & { applied: string[] })[]> {
  const done: (HeraldDatabase & { applied: string[] })[] = [];
  for (const database of heraldDatabases(config)) {
    done.push({ ...database, applied: await runMigrations({ ...config, DATABASE_URL: database.url }) });
  }
  return done;
}

/** A database URL as printed: without its password. */
export function printableUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}

/** Rows changed by an UPDATE or DELETE run through `query()`: TypeORM answers `[rows, count]`. */
export function affectedRows(result: unknown): number {
  return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
}
