import { Client } from 'pg';
import { loadConfig } from '@herald/config';
import { uniqueSuffix } from '@herald/testing';
import { runMigrations } from './data-source';

describe('runMigrations', () => {
  const config = loadConfig(process.env, { DATABASE_SCHEMA: `t_mig_${uniqueSuffix()}` });

  afterAll(async () => {
    const client = new Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${config.DATABASE_SCHEMA}" CASCADE`);
    await client.end();
  });

  it('applies each migration once when several processes migrate at the same moment', async () => {
    const runs = await Promise.all([runMigrations(config), runMigrations(config), runMigrations(config)]);
    expect(runs.flat()).toEqual(['Foundation1764100000000', 'Domains1764200000000', 'Suppressions1764300000000', 'Webhooks1764400000000', 'WebhookDeliveries1764500000000', 'Delivery1764600000000', 'SmtpMessages1764700000000', 'WebhookHealth1764800000000', 'DispatchOutbox1764900000000']);
    expect(await runMigrations(config)).toEqual([]);
  });
});
