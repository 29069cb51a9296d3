import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import type { HeraldConfig } from '@herald/config';
import { migrations, runMigrations } from '@herald/database';

const run = promisify(execFile);

/**
 * A suite's schema, migrated by copy. Every suite on the machine's Postgres gets a schema of its
 * own, and running the migrations into it took 1.5–2.5 s (about a hundred suites pay it). Instead
 * the migrations run once per set of migrations into a template schema, which `pg_dump` turns into
 * SQL; each suite replays that SQL under its own schema name, in one round trip.
 *
 * The template is keyed by the migrations' compiled source, so a changed migration makes a new
 * one; the SQL is cached beside it in the temporary folder, shared by the lanes and their workers.
 * Where `pg_dump` is missing, or it fails, the migrations run into the suite's schema as before.
 */
export async function createMigratedSchema(config: HeraldConfig): Promise<void> {
  try {
    const sql = await templateSql(config);
    const client = new Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    try {
      // One simple query, one implicit transaction: a failure leaves no half-made schema.
      await client.query(sql.schema.split(sql.template).join(config.DATABASE_SCHEMA));
    } finally {
      await client.end();
    }
  } catch (error) {
    if (!warned) process.emitWarning(`schema template unusable, migrating each suite's schema instead: ${(error as Error).message}`);
    warned = true;
    await runMigrations(config);
  }
}

let warned = false;

interface TemplateSql {
  template: string;
  schema: string;
}

const cached = new Map<string, Promise<TemplateSql>>();

function templateSql(config: HeraldConfig): Promise<TemplateSql> {
  const key = createHash('sha256')
    .update(config.DATABASE_URL)
    .update(migrations.map((m) => `${m.name}\n${String(m)}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  let sql = cached.get(key);
  if (!sql) {
    sql = dumpTemplate(config, `herald_template_${key}`, join(tmpdir(), `herald-schema-${key}.sql`));
    sql.catch(() => cached.delete(key));
    cached.set(key, sql);
  }
  return sql;
}

/** The template's SQL from the file, or made: migrated (once, under a lock) and dumped. */
async function dumpTemplate(config: HeraldConfig, template: string, file: string): Promise<TemplateSql> {
  if (existsSync(file)) return { template, schema: withoutMetaCommands(await readFile(file, 'utf8')) };
  const client = new Client({ connectionString: config.DATABASE_URL });
  await client.connect();
  try {
    // Two lanes start together: one migrates, the other waits and finds the template made.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
    const made = await client.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'herald_migrations'`,
      [template],
    );
    const applied = made.rows[0].n ? await client.query(`SELECT count(*)::int AS n FROM "${template}".herald_migrations`) : null;
    if (applied?.rows[0].n !== migrations.length) {
      await client.query(`DROP SCHEMA IF EXISTS "${template}" CASCADE`);
      await runMigrations({ ...config, DATABASE_SCHEMA: template });
    }
    const { stdout } = await run('pg_dump', ['--schema', template, '--no-owner', '--no-privileges', '--inserts', '--dbname', config.DATABASE_URL], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const partial = `${file}.${process.pid}`;
    await writeFile(partial, stdout);
    await rename(partial, file);
    return { template, schema: withoutMetaCommands(stdout) };
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [template]).catch(() => undefined);
    await client.end();
  }
}

/** psql meta-commands (pg_dump 15.14 and later wrap the dump in `\\restrict`) are not SQL. */
function withoutMetaCommands(dump: string): string {
  return dump.replace(/^\\.*$/gm, '');
}
