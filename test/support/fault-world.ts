import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { HeraldConfig } from '@herald/config';
import {
  freeSharedPort,
  isolatedConfig,
  MxSink,
  ScriptedMx,
  TcpProxy,
  TestDnsServer,
  type IsolatedConfig,
  type MxSinkOptions,
  type PrivateStack,
} from '@herald/testing';
import { WebhookReceiver } from '../webhooks/webhook-receiver';
import { request, type Reply } from './fault-http';
import { freePort, herald, startApiProcess, type ApiProcess } from './herald-process';
import { startWorkerProcess, waitUntil, workerEnv, type WorkerProcess } from './worker-process';

/** How long a role may take to start: the machine is shared, and a scenario starts three at once. */
const READY_TIMEOUT_MS = 60_000;
const SINK_HOSTS = Array.from({ length: 12 }, (_, i) => `127.0.0.${i + 40}`);
export { request, type Reply } from './fault-http';

export const FAULT_ROLES = ['api', 'worker', 'webhooks', 'smtp', 'metrics'] as const;
export type FaultRole = (typeof FAULT_ROLES)[number];
export type FaultService = 'postgres' | 'redis' | 'nats';

/** Settings that make a scenario fast: retries, claims and reconciliation in seconds, not minutes. */
const FAST: Record<string, string> = {
  LOG_LEVEL: 'error',
  DOMAIN_CACHE_MS: '0',
  RECONCILE_INTERVAL_MS: '200',
  DISPATCH_GRACE_SECONDS: '1',
  DELIVERY_HOSTNAME: 'mta.us-east-1.herald.test',
  DELIVERY_RETRY_SCHEDULE: '1',
  DELIVERY_CLAIM_SECONDS: '4',
  DELIVERY_CONNECT_TIMEOUT_MS: '1000',
  DELIVERY_GREETING_TIMEOUT_MS: '2000',
  DELIVERY_COMMAND_TIMEOUT_MS: '5000',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8',
  WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1',
  IDEMPOTENCY_IN_FLIGHT_SECONDS: '2',
};

export interface FaultTeam {
  id: string;
  token: string;
  from: string;
  domainId: string;
}

/** A role started as a child process: `herald webhooks` (api and worker have their own starters). */
export interface RoleProcess {
  child: ChildProcess;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * One fault scenario's world on a suite's private stack: a fresh schema, Redis prefix and NATS
 * namespace; a TCP proxy between every role and every service (so one role can be cut from one
 * service); Herald's roles as child processes; DNS, MX sinks and a webhook receiver in this process.
 */
export class FaultWorld {
  readonly sinks: (MxSink | ScriptedMx)[] = [];
  readonly roles: { stop(signal?: NodeJS.Signals): Promise<unknown> }[] = [];
  /** Every role process started, by role, for `ended()`. */
  private readonly started: { role: FaultRole; child: ChildProcess; stderr(): string }[] = [];
  private readonly closers: (() => Promise<unknown>)[] = [];
  private nextHost = 0;

  private constructor(
    readonly stack: PrivateStack,
    private readonly isolated: IsolatedConfig,
    readonly dns: TestDnsServer,
    readonly mxPort: number,
    readonly proxies: Record<`${FaultRole}.${FaultService}`, TcpProxy>,
    readonly receiver: WebhookReceiver,
    private client: Client,
    readonly apiPort: number,
    private readonly overrides: Record<string, string>,
  ) {}

  static async start(stack: PrivateStack, overrides: Record<string, string> = {}): Promise<FaultWorld> {
    const dns = await TestDnsServer.start();
    const mxPort = await freeSharedPort(SINK_HOSTS);
    const isolated = await isolatedConfig({ ...stack.urls, ...FAST, DNS_SERVERS: dns.address(), DELIVERY_PORT: String(mxPort), ...overrides });
    const targets = { postgres: stack.postgres.port, redis: stack.redis.port, nats: stack.nats.port };
    const proxies = {} as Record<`${FaultRole}.${FaultService}`, TcpProxy>;
    for (const role of FAULT_ROLES) {
      for (const [service, port] of Object.entries(targets)) proxies[`${role}.${service as FaultService}`] = await TcpProxy.start({ port });
    }
    const db = await connectDb(stack, isolated.config.DATABASE_SCHEMA);
    return new FaultWorld(stack, isolated, dns, mxPort, proxies, await WebhookReceiver.start(), db, await freePort(), overrides);
  }

  /** The scenario's own connection to its schema (not through any proxy). */
  get db(): Client {
    return this.client;
  }

  /** A new connection for `db`, after a scenario killed Postgres under the old one. */
  async reconnectDb(): Promise<void> {
    await this.client.end().catch(() => undefined);
    this.client = await connectDb(this.stack, this.config.DATABASE_SCHEMA);
  }

  get config(): HeraldConfig {
    return this.isolated.config;
  }

  /** A role's environment: the scenario's isolation, the fast settings, and every service through the role's proxies. */
  env(role: FaultRole, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return workerEnv(this.config, {
      ...FAST,
      ...this.overrides,
      DATABASE_URL: this.proxies[`${role}.postgres`].rewrite(this.stack.urls.DATABASE_URL),
      REDIS_URL: this.proxies[`${role}.redis`].rewrite(this.stack.urls.REDIS_URL),
      NATS_URL: this.proxies[`${role}.nats`].rewrite(this.stack.urls.NATS_URL),
      ...extra,
    });
  }

  /** `herald api` on the scenario's fixed port (a restarted API answers at the same address). */
  async api(extra: Record<string, string> = {}): Promise<ApiProcess> {
    const api = await startApiProcess(this.env('api', extra), this.apiPort, READY_TIMEOUT_MS);
    this.roles.push(api);
    this.started.push({ role: 'api', ...api });
    return api;
  }

  /** Another `herald api` beside the scenario's, on a free port (one to be killed, say). */
  async extraApi(extra: Record<string, string> = {}): Promise<ApiProcess> {
    const api = await startApiProcess(this.env('api', extra), undefined, READY_TIMEOUT_MS);
    this.roles.push(api);
    this.started.push({ role: 'api', ...api });
    return api;
  }

  apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  async worker(extra: Record<string, string> = {}, options: { waitReady?: boolean } = {}): Promise<WorkerProcess> {
    const worker = await startWorkerProcess(this.env('worker', extra), { readyTimeoutMs: READY_TIMEOUT_MS, ...options });
    this.roles.push(worker);
    this.started.push({ role: 'worker', ...worker });
    return worker;
  }

  async webhooks(extra: Record<string, string> = {}): Promise<RoleProcess> {
    return this.role('webhooks', extra);
  }

  /** A role without HTTP (`herald webhooks`, `smtp`, `metrics`), ready once its ops port says so. */
  async role(name: Exclude<FaultRole, 'api'>, extra: Record<string, string> = {}, options: { openFiles?: number } = {}): Promise<WorkerProcess> {
    const role = await startWorkerProcess(this.env(name, extra), { role: name, readyTimeoutMs: READY_TIMEOUT_MS, ...options });
    this.roles.push(role);
    this.started.push({ role: name, ...role });
    return role;
  }

  /**
   * A team with a key (made by the CLI), a verified sending domain and a webhook on every email
   * event to the receiver (made through the API: it waits for one to answer at the scenario's
   * address, so it can run while the roles start).
   */
  async team(name = 'faults'): Promise<FaultTeam> {
    const direct = workerEnv(this.config, { ...this.stack.urls });
    const team = await herald(direct, 'team', 'create', '--name', name, '--plan', 'scale-1m', '--rate-limit', '100000');
    const { token } = await herald(direct, 'key', 'create', '--team', team.id);
    await waitUntil(
      'the API',
      () =>
        fetch(`${this.apiUrl()}/health/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      READY_TIMEOUT_MS,
      100,
    );
    const domain = `${name}.acme.test`;
    const created = await this.call(token, 'POST', '/domains', { name: domain });
    if (created.status !== 200) throw new Error(`POST /domains: ${created.status} ${JSON.stringify(created.body)}`);
    await this.db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [created.body.id]);
    const events = [
      'email.sent',
      'email.delivered',
      'email.bounced',
      'email.failed',
      'email.suppressed',
      'email.delivery_delayed',
      'email.complained',
    ];
    const hook = await this.call(token, 'POST', '/webhooks', { endpoint: this.receiver.url(`/${team.id}`), events });
    if (hook.status !== 200 && hook.status !== 201) throw new Error(`POST /webhooks: ${hook.status} ${JSON.stringify(hook.body)}`);
    return { id: team.id, token, from: `hello@${domain}`, domainId: created.body.id };
  }

  /** The usual start of a scenario: api, worker and webhooks roles (with `extra` settings) and a team, side by side. */
  async startRoles(
    name: string,
    extra: Record<string, string> = {},
  ): Promise<{ team: FaultTeam; api: ApiProcess; worker: WorkerProcess; webhooks: RoleProcess }> {
    // Settled, not Promise.all: when one start fails, the others still register their process
    // before the scenario's close() runs, or they would outlive the scenario.
    const started = await Promise.allSettled([this.team(name), this.api(extra), this.worker(extra), this.webhooks(extra)] as const);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [team, api, worker, webhooks] = started.map((s) => (s as PromiseFulfilledResult<unknown>).value) as [
      FaultTeam,
      ApiProcess,
      WorkerProcess,
      RoleProcess,
    ];
    return { team, api, worker, webhooks };
  }

  /**
   * The role processes that have ended, each with how and its stderr's first lines: for a scenario
   * that faults a service, never a role, any ended role crashed (an unhandled error, say). Without
   * it a crash shows only as mail not delivered or a client's retries giving up.
   */
  ended(): { role: FaultRole; exit: string; stderr: string }[] {
    return this.started
      .filter(({ child }) => child.exitCode !== null || child.signalCode !== null)
      .map(({ role, child, stderr }) => ({
        role,
        exit: String(child.exitCode ?? child.signalCode),
        stderr: stderr().split('\n').slice(0, 12).join('\n'),
      }));
  }

  /** Registers what must stop at close() even when the scenario failed half-way (a client load). */
  onClose(stop: () => Promise<unknown>): void {
    this.closers.push(stop);
  }

  /** A raw request to the API: network errors (a dead or cut API) come back as status 0. */
  call(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 10_000): Promise<Reply> {
    return request(this.apiUrl(), token, method, path, body, headers, timeoutMs);
  }

  /** An MX sink (smtp-server) for `domain`, on the next loopback address. */
  async sink(domain: string, options: Partial<MxSinkOptions> = {}): Promise<MxSink> {
    const sink = await MxSink.start({ host: this.host(), port: this.mxPort, starttls: false, ...options });
    this.route(domain, sink.host);
    this.sinks.push(sink);
    return sink;
  }

  /** A scripted MX (trickle, drop after data) for `domain`. */
  async scriptedMx(domain: string): Promise<ScriptedMx> {
    const mx = await ScriptedMx.start({ host: this.host(), port: this.mxPort });
    this.route(domain, mx.host);
    this.sinks.push(mx);
    return mx;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.closers.map((stop) => stop()));
    await Promise.allSettled(this.roles.map((r) => r.stop('SIGKILL')));
    await Promise.allSettled(this.sinks.map((s) => s.close()));
    await Promise.allSettled(Object.values(this.proxies).map((p) => p.close()));
    await this.receiver.close();
    await this.dns.close();
    await this.client.end().catch(() => undefined);
    await this.isolated.cleanup().catch(() => undefined);
  }

  private host(): string {
    const host = SINK_HOSTS[this.nextHost++];
    if (!host) throw new Error('out of sink addresses');
    return host;
  }

  private route(domain: string, address: string): void {
    this.dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
    this.dns.set(`mx.${domain}`, 'A', [address]);
  }
}

async function connectDb(stack: PrivateStack, schema: string): Promise<Client> {
  const db = new Client({ connectionString: stack.urls.DATABASE_URL });
  // A scenario may kill Postgres under this connection; its queries fail loudly, the event need not.
  db.on('error', () => undefined);
  await db.connect();
  await db.query(`SET search_path TO "${schema}"`);
  return db;
}
