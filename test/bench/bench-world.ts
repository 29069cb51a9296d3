import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { HeraldConfig, loadConfig } from '@herald/config';
import { sendStreamName } from '@herald/bus';
import { recordHost } from '@herald/domains';
import { deleteNamespaceStreams, purgeRedisPrefix, TestDnsServer, ZoneRecordType, ZoneValues } from '@herald/testing';
import { BenchReport } from './bench-report';
import { heraldCli } from './bench-processes';

/** A DNS record as POST /domains lists it. */
interface PresentedRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  priority?: number;
}

/** `run` on a connection of its own to `url`'s database, closed after it. */
export async function withPg<T>(url: string, run: (pg: Client) => Promise<T>): Promise<T> {
  const pg = new Client({ connectionString: url });
  await pg.connect();
  try {
    return await run(pg);
  } finally {
    await pg.end();
  }
}

/**
 * The bench's own corner of the machine's Postgres, Redis and NATS: a schema, a key prefix and
 * a namespace named after this process, so it never touches a deployment's or a test's data;
 * and a local authoritative DNS server that publishes the records of its sending domain.
 */
export class BenchWorld {
  readonly env: NodeJS.ProcessEnv;
  readonly config: HeraldConfig;
  /** The region's work-queue stream of send commands. */
  readonly stream: string;
  /** The sending domain the bench creates and verifies (`verifyDomain`). */
  readonly domain: string;
  private dns: TestDnsServer | null = null;

  constructor() {
    const suffix = process.pid.toString(36);
    this.domain = `acme-bench-${suffix}.test`;
    this.env = {
      ...process.env,
      // Production settings, as a deployment runs them; the key only has to be well-formed.
      NODE_ENV: 'production',
      DKIM_ENCRYPTION_KEY: process.env.DKIM_ENCRYPTION_KEY ?? randomBytes(32).toString('base64'),
      AUTH_SECRET: process.env.AUTH_SECRET ?? randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      HERALD_REGION: 'us-east-1',
      DATABASE_SCHEMA: `bench_${suffix}`,
      REDIS_PREFIX: `bench:${suffix}:`,
      NATS_NAMESPACE: `bench_${suffix}`,
    };
    this.config = loadConfig(this.env);
    this.stream = sendStreamName(this.config.NATS_NAMESPACE, this.config.HERALD_REGION);
  }

  /** Starts the DNS server; call before starting any Herald process, which must resolve through it. */
  async start(): Promise<void> {
    this.dns = await TestDnsServer.start();
    this.env.DNS_SERVERS = this.dns.address();
  }

  /** Publishes a record on the local DNS server (e.g. recipient domains' MX); after `start`. */
  publish<T extends ZoneRecordType>(name: string, type: T, values: ZoneValues[T]): void {
    if (!this.dns) throw new Error('BenchWorld.publish before start');
    this.dns.set(name, type, values);
  }

  /**
   * Adds a sending domain (the bench's own by default) as a customer would (POST /domains, in
   * `region` when given), publishes the DNS records the API asked for, and has Herald check them
   * (`herald domain verify`); fails unless verified.
   */
  async verifyDomain(apiUrl: string, token: string, name = this.domain, region?: string): Promise<void> {
    const response = await fetch(`${apiUrl}/domains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, ...(region && { region }) }),
    });
    const created = (await response.json()) as { region?: string; records?: PresentedRecord[] };
    if (!response.ok || !created.records) throw new Error(`POST /domains answered ${response.status}: ${JSON.stringify(created)}`);
    if (region && created.region !== region) throw new Error(`${name} was made in ${created.region}, not ${region}`);
    for (const r of created.records) {
      const host = recordHost(r, name);
      if (r.type === 'MX') this.dns!.set(host, 'MX', [{ exchange: r.value, priority: r.priority ?? 10 }]);
      else if (r.type === 'TXT' || r.type === 'CNAME') this.dns!.set(host, r.type, [r.value]);
      else throw new Error(`the bench cannot publish a ${r.type} record yet (${r.record})`);
    }
    const report = await heraldCli<{ status: string }>(this.env, 'domain', 'verify', name);
    if (report.status !== 'verified') throw new Error(`${name} is ${report.status}: ${JSON.stringify(report)}`);
  }

  /** A query session on the bench's schema's database (DATABASE_URL), or on another database holding the same schema (a region's email plane). */
  private withPg<T>(run: (pg: Client) => Promise<T>, url = this.config.DATABASE_URL): Promise<T> {
    return withPg(url, run);
  }

  private get emailsTable(): string {
    return `"${this.config.DATABASE_SCHEMA}".emails`;
  }

  /** Rows of the emails table, in DATABASE_URL's database or `url`'s. */
  countEmails(url?: string): Promise<number> {
    return this.withPg(async (pg) => Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.emailsTable}`)).rows[0].n), url);
  }

  /** How many of these ids are rows of the emails table (in DATABASE_URL's database or `url`'s). */
  countCommitted(ids: string[], url?: string): Promise<number> {
    return this.withPg(async (pg) => {
      let found = 0;
      for (let i = 0; i < ids.length; i += 50_000) {
        const sql = `SELECT count(*) AS n FROM ${this.emailsTable} WHERE id = ANY($1::uuid[])`;
        found += Number((await pg.query<{ n: string }>(sql, [ids.slice(i, i + 50_000)])).rows[0].n);
      }
      return found;
    }, url);
  }

  /**
   * Messages stored on the send stream. The email id is each message's Nats-Msg-Id, so the
   * stream holds an email at most once: as many messages as rows means every row is on it.
   */
  async countPublished(): Promise<number> {
    const nc = await connect({ servers: this.config.NATS_URL });
    try {
      return (await (await jetstreamManager(nc)).streams.info(this.stream)).state.messages;
    } finally {
      await nc.close();
    }
  }

  /**
   * Waits until the emails table stops growing: requests the load generator cut off when a run
   * stopped are still being committed and published, and stopping the API would interrupt them.
   * Answers its rows (in DATABASE_URL's database or `url`'s).
   */
  async settle(url?: string): Promise<number> {
    for (let last = -1; ;) {
      const now = await this.countEmails(url);
      if (now === last) return now;
      last = now;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  async describeMachine(): Promise<Omit<BenchReport['machine'], 'backgroundLoad'>> {
    const nc = await connect({ servers: this.config.NATS_URL });
    try {
      return await this.withPg(async (pg) => {
        const setting = async (name: string) => (await pg.query<Record<string, string>>(`SHOW ${name}`)).rows[0][name];
        return {
          cpu: cpus()[0]?.model ?? 'unknown',
          cpus: cpus().length,
          node: process.version,
          postgres: await setting('server_version'),
          synchronousCommit: await setting('synchronous_commit'),
          nats: nc.info?.version ?? 'unknown',
        };
      });
    } finally {
      await nc.close();
    }
  }

  /** Drops the schema (unless kept, to inspect), the Redis keys and the streams the bench made; stops the DNS server. */
  async cleanup(keepSchema = false): Promise<void> {
    const dns = this.dns;
    this.dns = null;
    await dns?.close();
    if (!keepSchema) await this.withPg((pg) => pg.query(`DROP SCHEMA IF EXISTS "${this.config.DATABASE_SCHEMA}" CASCADE`));
    await purgeRedisPrefix(this.config);
    await deleteNamespaceStreams(this.config);
  }
}
