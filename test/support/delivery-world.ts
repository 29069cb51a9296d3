import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import type { INestApplicationContext } from '@nestjs/common';
import { Client } from 'pg';
import { BounceMxHost } from '@herald/smtp';
import { freeSharedPort, MxSink, TestDnsServer, type MxSinkOptions, type SinkMessage } from '@herald/testing';
import { startSmtp } from '../../apps/smtp/src/smtp.app';
import { startWorker } from '../../apps/worker/src/worker.app';
import { call, startTestApi, type TestApi, type TestTeam } from './api-harness';

export interface StoredEvent {
  id: string;
  type: string;
  recipients: string[];
  data: Record<string, any>;
  created_at: Date;
  published_at: Date | null;
}

export interface RecipientRow {
  address: string;
  status: string;
  attempts: number;
  last_response: string | null;
  mx: string | null;
}

/** Loopback addresses the sinks listen on (Linux routes all of 127/8 to lo). */
const SINK_HOSTS = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 2}`);
/** An address where nothing listens: a dead MX. */
export const DEAD_HOST = '127.0.0.99';

/**
 * The outside world of a delivery test, all on this machine: an authoritative DNS server, MX
 * sinks on 127.0.0.x sharing one port (Herald's DELIVERY_PORT), and Herald's api, worker and smtp
 * roles in this process on an isolated schema, Redis prefix and NATS namespace.
 */
export class DeliveryWorld {
  private readonly sinks: MxSink[] = [];
  private nextHost = 0;

  private constructor(
    readonly dns: TestDnsServer,
    readonly port: number,
    readonly api: TestApi,
    /** The in-process worker; null when started with `{ worker: false }` (a test runs its own, e.g. as a child process). */
    readonly worker: INestApplicationContext | null,
    readonly smtp: INestApplicationContext,
    readonly db: Client,
  ) {}

  static async start(overrides: Record<string, string> = {}, options: { worker?: boolean } = {}): Promise<DeliveryWorld> {
    const dns = await TestDnsServer.start();
    const port = await freeSharedPort([...SINK_HOSTS, DEAD_HOST]);
    const api = await startTestApi({
      DNS_SERVERS: dns.address(),
      DELIVERY_PORT: String(port),
      DELIVERY_HOSTNAME: 'mta.us-east-1.herald.test',
      REGION_SPF: 'us-east-1=ip4:127.0.0.0/8',
      DOMAIN_CACHE_MS: '0',
      RECONCILE_INTERVAL_MS: '100',
      DISPATCH_GRACE_SECONDS: '1',
      DELIVERY_RETRY_SCHEDULE: '1',
      DELIVERY_CONNECT_TIMEOUT_MS: '1000',
      DELIVERY_GREETING_TIMEOUT_MS: '1000',
      DELIVERY_COMMAND_TIMEOUT_MS: '2000',
      BOUNCE_MX_HOST: '127.0.0.1',
      BOUNCE_MX_PORT: '0',
      ...overrides,
    });
    const worker = options.worker === false ? null : await startWorker(api.config);
    const smtp = await startSmtp(api.config);
    const db = new Client({ connectionString: api.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${api.config.DATABASE_SCHEMA}"`);
    return new DeliveryWorld(dns, port, api, worker, smtp, db);
  }

  /** A new sink on the next loopback address. */
  async sink(options: Partial<MxSinkOptions> = {}): Promise<MxSink> {
    const host = SINK_HOSTS[this.nextHost++];
    if (!host) throw new Error('out of sink addresses');
    const sink = await MxSink.start({ host, port: this.port, ...options });
    this.sinks.push(sink);
    return sink;
  }

  /** `domain` receives mail at `sink` (an MX record and the MX host's A record). */
  route(domain: string, ...mx: { host: string; priority?: number; address: string }[]): void {
    this.dns.set(
      domain,
      'MX',
      mx.map((m, i) => ({ exchange: m.host, priority: m.priority ?? (i + 1) * 10 })),
    );
    for (const m of mx) this.dns.set(m.host, 'A', [m.address]);
  }

  /** A team whose sending domain's DKIM, SPF and DMARC records are published in the local DNS. */
  async team(input: Parameters<TestApi['team']>[0] = {}): Promise<TestTeam> {
    const team = await this.api.team(input);
    const { body } = await call(this.api.url, team.token, 'GET', `/domains/${team.domainId}`);
    for (const record of body.records as { name: string; type: 'TXT' | 'MX'; value: string; priority?: number }[]) {
      const name = `${record.name}.${team.domain}`;
      if (record.type === 'TXT') this.dns.set(name, 'TXT', [record.value]);
      if (record.type === 'MX') this.dns.set(name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
    }
    this.dns.set(`_dmarc.${team.domain}`, 'TXT', ['v=DMARC1; p=reject']);
    return team;
  }

  /** A resolver of the local DNS, for verifiers (mailauth). */
  resolver(): (name: string, type: string) => Promise<unknown> {
    const resolver = new Resolver();
    resolver.setServers([this.dns.address()]);
    return (name, type) => resolver.resolve(name, type);
  }

  /**
   * What an independent receiver (mailauth) makes of a message a sink received: DKIM, SPF and
   * DMARC checked against the local DNS, as the recipient's MX would.
   */
  async authenticateAtSink(message: SinkMessage, mta = 'mx.inbox.test'): Promise<any> {
    return authenticate(message.raw, {
      ip: message.remoteAddress,
      helo: message.clientHostname,
      sender: message.envelopeFrom,
      mta,
      resolver: this.resolver() as never,
    });
  }

  bounceMxPort(): number {
    return this.smtp.get(BounceMxHost).port();
  }

  async events(emailId: string): Promise<StoredEvent[]> {
    const { rows } = await this.db.query<StoredEvent>(
      `SELECT id, type, recipients, data, created_at, published_at FROM email_events WHERE email_id = $1 ORDER BY created_at, id`,
      [emailId],
    );
    return rows;
  }

  async recipients(emailId: string): Promise<RecipientRow[]> {
    const { rows } = await this.db.query<RecipientRow>(
      `SELECT address, status, attempts, last_response, mx FROM email_recipients WHERE email_id = $1 ORDER BY position`,
      [emailId],
    );
    return rows;
  }

  async lastEvent(emailId: string): Promise<string> {
    const { rows } = await this.db.query<{ last_event: string }>(`SELECT last_event FROM emails WHERE id = $1`, [emailId]);
    return rows[0]?.last_event;
  }

  /** Waits until the email has an event of this type (and returns its events). */
  async waitForEvent(emailId: string, type: string, timeoutMs = 10_000): Promise<StoredEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = await this.events(emailId);
      if (events.some((e) => e.type === type)) return events;
      if (Date.now() > deadline)
        throw new Error(`no ${type} for ${emailId} within ${timeoutMs} ms; saw ${events.map((e) => e.type).join(', ') || 'none'}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.worker?.close(), this.smtp.close()]);
    await this.db.end();
    await Promise.allSettled(this.sinks.map((s) => s.close()));
    await this.api.close();
    await this.dns.close();
  }
}
