import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { migrations } from '@herald/database';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { envOf, herald } from '../support/herald-process';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');
const run = (env: NodeJS.ProcessEnv, ...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });

/** The operator CLI as an operator (or a Kubernetes pod) runs it: `herald <command>`, JSON out. */
describe('herald CLI', () => {
  let isolated: IsolatedConfig;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    env = envOf(isolated.config);
  });
  afterAll(() => isolated.cleanup());

  it('lists the configured regions', async () => {
    expect(await herald({ ...env, HERALD_REGIONS: 'us-east-1,eu-west-1' }, 'regions')).toEqual({
      object: 'list',
      current: 'us-east-1',
      data: ['us-east-1', 'eu-west-1'],
    });
  });

  it('migrates (nothing left to apply on a migrated schema), saying which database holds what', async () => {
    expect(await herald({ ...env, HERALD_REGIONS: 'us-east-1,eu-west-1' }, 'migrate')).toEqual({
      object: 'migrations',
      schema: isolated.config.DATABASE_SCHEMA,
      databases: [{ database: isolated.config.DATABASE_URL, holds: ['control', 'us-east-1', 'eu-west-1'], applied: [] }],
    });
  });

  it("migrates each region's own database and the control database, each once", async () => {
    const name = `herald_cli_eu_${process.pid}`;
    const admin = new Client({ connectionString: isolated.config.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const eu = new URL(isolated.config.DATABASE_URL);
      eu.pathname = `/${name}`;
      eu.password = 'secret';
      const regional = { ...env, HERALD_REGIONS: 'us-east-1,eu-west-1', REGION_DATABASE_URLS: `eu-west-1=${eu.href}` };
      const printedEu = eu.href.replace(':secret@', ':***@');
      const first = await herald(regional, 'migrate');
      expect(first.databases).toEqual([
        { database: isolated.config.DATABASE_URL, holds: ['control', 'us-east-1'], applied: [] },
        { database: printedEu, holds: ['eu-west-1'], applied: migrations.map((m) => m.name) },
      ]);
      const again = await herald(regional, 'migrate');
      expect(again.databases.map((d: { applied: string[] }) => d.applied)).toEqual([[], []]);
      // The whole schema in the region's database, in the same schema name.
      const tables = await admin.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1`, [isolated.config.DATABASE_SCHEMA]);
      const euClient = new Client({ connectionString: eu.href.replace(':secret@', '@') });
      await euClient.connect();
      const euTables = await euClient.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1`, [isolated.config.DATABASE_SCHEMA]);
      await euClient.end();
      expect(euTables.rows[0].n).toBe(tables.rows[0].n);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('refuses a region database for a region it does not serve', async () => {
    const result = run({ ...env, HERALD_REGIONS: 'us-east-1', REGION_DATABASE_URLS: 'eu-west-1=postgres://x@127.0.0.1/y' }, 'migrate');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('REGION_DATABASE_URLS: names a region that is not in HERALD_REGIONS');
  });

  it('creates a team and a key, and the key is shown once in the Herald format', async () => {
    const team = await herald(env, 'team', 'create', '--name', 'Acme', '--region', 'eu-west-1', '--plan', 'pro-50k');
    expect(team).toMatchObject({ object: 'team', name: 'Acme', region: 'eu-west-1', plan: 'pro-50k', rate_limit: null });
    const key = await herald(env, 'key', 'create', '--team', team.id, '--permission', 'sending_access');
    expect(key).toMatchObject({ object: 'api_key', team_id: team.id, permission: 'sending_access' });
    expect(key.token).toMatch(/^hr_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
  });

  it('refuses bad input with a precise message and exit code 1', () => {
    const badRegion = run(env, 'team', 'create', '--name', 'Acme', '--region', 'mars-1');
    expect(badRegion.status).toBe(1);
    expect(JSON.parse(badRegion.stderr)).toMatchObject({ error: 'invalid_region' });
    const missing = run(env, 'key', 'create');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('--team is required');
  });

  it('stops boot on a wrong configuration value, naming the variable', () => {
    const result = run({ ...env, HERALD_REGION: 'moon-base-1' }, 'api');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('HERALD_REGION: must be one of HERALD_REGIONS (got "moon-base-1")');
    const port = run({ ...env, API_PORT: 'eighty' }, 'api');
    expect(port.status).toBe(1);
    expect(port.stderr).toContain('API_PORT');
  });
});
