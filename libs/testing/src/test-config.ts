import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { HeraldConfig, loadConfig } from '@herald/config';
import { runMigrations } from '@herald/database';
import { deleteNamespaceStreams, purgeRedisPrefix } from './cleanup';
import { createMigratedSchema } from './schema-template';

/**
 * A configuration isolated for one test suite on the machine's real services: its own Postgres
 * schema (migrated), Redis key prefix and NATS namespace (so stream and subject names are its own).
 */
export interface IsolatedConfig {
  config: HeraldConfig;
  /** Drops the schema, the Redis keys and the NATS streams this suite made. */
  cleanup(): Promise<void>;
}

export function uniqueSuffix(): string {
  return `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
}

export async function isolatedConfig(overrides: Record<string, string> = {}): Promise<IsolatedConfig> {
  const suffix = uniqueSuffix();
  const config = loadConfig(process.env, {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    DATABASE_SCHEMA: `t_${suffix}`,
    REDIS_PREFIX: `t:${suffix}:`,
    NATS_NAMESPACE: `t_${suffix}`,
    API_PORT: '0',
    OPS_PORT: '0',
    // the smtp role's relay: free loopback ports, one of each kind (suites run in parallel)
    SMTP_HOST: '127.0.0.1',
    SMTP_PORTS: '0:tls,0:starttls',
    ...overrides,
  });
  // A private Postgres (a fault world's) is new each time: a template there would not be reused.
  await (overrides.DATABASE_URL ? runMigrations(config) : createMigratedSchema(config));
  return {
    config,
    cleanup: async () => {
      await dropSchema(config);
      await purgeRedisPrefix(config);
      await deleteNamespaceStreams(config);
    },
  };
}

async function dropSchema(config: HeraldConfig): Promise<void> {
  const client = new Client({ connectionString: config.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${config.DATABASE_SCHEMA}" CASCADE`);
  } finally {
    await client.end();
  }
}
