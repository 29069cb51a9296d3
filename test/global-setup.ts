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
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
}
