import { Client } from 'pg';
import { loadConfig } from '../libs/config/src';

/** Makes sure the database the suites isolate their schemas in exists. */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig();
  const url = new URL(config.DATABASE_URL);
  const database = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    // Two jest lanes start at once (test/run-lanes.mjs): the one that loses the race finds it made.
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`).catch(ignoreIfMade);
  } finally {
    await client.end();
  }
}

/** duplicate_database, or the unique violation a concurrent CREATE DATABASE can raise instead. */
function ignoreIfMade(error: { code?: string }): void {
  if (error.code !== '42P04' && error.code !== '23505') throw error;
}
