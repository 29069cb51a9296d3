import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freeSharedPort } from '@herald/testing';
import { DIST } from './aliases';
import { OpenDkim } from './bench-opendkim';
import { PostfixInstance } from './bench-postfix';
import { freePort, heraldCli, ServerProcess, startHeraldApi, startHeraldRole } from './bench-processes';
import { BenchWorld } from './bench-world';
import { checkDumps, dkimChecker, meterPhase, type PhaseResult } from './smtp-measure';
import { options, RCPT_DOMAIN, run, SINK_HOST, SINK_MX, STALL_MS, type System } from './smtp-options';
import { Proxy, Sink, smtpSource } from './smtp-processes';

/** The SMTP bench's stack (sink, Herald's roles, a private Postfix with OpenDKIM, the shim) and its phases. */
export class Bench {
  readonly world = new BenchWorld();
  tmp = '';
  dumpDir: string | null = null;
  sink: Sink | null = null;
  proxy: Proxy | null = null;
  postfix: PostfixInstance | null = null;
  opendkim: OpenDkim | null = null;
  api: ServerProcess | null = null;
  smtp: ServerProcess | null = null;
  workers: ServerProcess[] = [];
  token = '';
  private pg: Client | null = null;
  /** Each system's route through the shim (its index in the shim's ports). */
  private readonly routes = new Map<System, number>();
  private dkimPasses: ((message: Buffer) => Promise<boolean>) | null = null;

  get heraldProcesses(): Record<string, number[]> {
    return { smtp: this.smtp ? [this.smtp.pid] : [], api: this.api ? [this.api.pid] : [], worker: this.workers.map((w) => w.pid) };
  }

  async setUp(): Promise<void> {
    const world = this.world;
    await world.start();
    this.tmp = mkdtempSync(join(tmpdir(), 'herald-smtp-bench-'));
    // Postfix's daemons (user postfix) go through it to their queue and data directories.
    chmodSync(this.tmp, 0o755);
    const cert = join(this.tmp, 'cert.pem');
    const key = join(this.tmp, 'key.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=smtp.bench.test',
    ]);

    const sinkPort = await freeSharedPort([SINK_HOST]);
    world.publish(SINK_MX, 'A', [SINK_HOST]);
    world.publish(RCPT_DOMAIN, 'MX', [{ exchange: SINK_MX, priority: 10 }]);
    if (options.dump) {
      this.dumpDir = `/dev/shm/herald-smtp-bench-${process.pid}`;
      mkdirSync(this.dumpDir, { recursive: true });
      chownSync(this.dumpDir, Number((await run('id', ['-u', 'nobody'])).stdout.trim()), -1);
    }
    this.sink = await Sink.start(SINK_HOST, sinkPort, this.dumpDir);

    const routes: { host: string; port: number; user?: string; pass?: string }[] = [];
    const route = (system: System, to: (typeof routes)[number]) => this.routes.set(system, routes.push(to) - 1);
    const runs = (system: System) => options.only === null || options.only === system;
    if (runs('herald')) {
      const smtpPort = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...world.env,
        DELIVERY_PORT: String(sinkPort),
        DELIVERY_HOSTNAME: 'mta.us-east-1.herald.test',
        REGION_SPF: 'us-east-1=ip4:127.0.0.0/8',
        SMTP_HOST: '127.0.0.1',
        SMTP_PORTS: `${smtpPort}:starttls`,
        SMTP_HOSTNAME: 'smtp.bench.test',
        SMTP_TLS_CERT: cert,
        SMTP_TLS_KEY: key,
        // the smtp role also runs the region's bounce MX, by default on port 25
        BOUNCE_MX_HOST: '127.0.0.1',
        BOUNCE_MX_PORT: '0',
      };
      await heraldCli(env, 'migrate');
      const team = await heraldCli<{ id: string }>(env, 'team', 'create', '--name', 'SMTP bench', '--plan', 'scale-2.5m', '--rate-limit', '1000000');
      this.token = (await heraldCli<{ token: string }>(env, 'key', 'create', '--team', team.id, '--name', 'SMTP bench key')).token;
      // One directory per role, so that `node dist/test/bench/profile-summary.js DIR` can name each profile's process.
      const profiles = join(DIST, '..', 'test', 'bench', 'results', 'profiles', `smtp-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      const nodeArgs = (role: string) => (options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profiles, role)}`] : []);
      if (options.profile) process.stderr.write(`bench: CPU profiles go to ${profiles}\n`);
      this.api = await startHeraldApi(env, 1, nodeArgs('api'));
      await world.verifyDomain(this.api.url, this.token);
      for (let i = 0; i < options.workers; i++) this.workers.push(await startHeraldRole(env, 'worker', nodeArgs('worker')));
      this.smtp = await startHeraldRole(env, 'smtp', nodeArgs('smtp'));
      route('herald', { host: '127.0.0.1', port: smtpPort, user: 'herald', pass: this.token });
      this.pg = new Client({ connectionString: world.config.DATABASE_URL });
      await this.pg.connect();
    }
    if (runs('postfix') || runs('postfix-dkim')) {
      const listenPort = await freePort();
      const signingPort = await freePort();
      if (runs('postfix-dkim')) {
        this.opendkim = await OpenDkim.start({ dir: join(this.tmp, 'opendkim'), port: await freePort(), domain: world.domain });
        world.publish(this.opendkim.record.name, 'TXT', [this.opendkim.record.value]);
      }
      this.postfix = new PostfixInstance({
        dir: join(this.tmp, 'postfix'),
        listenPort,
        relayHost: SINK_HOST,
        relayPort: sinkPort,
        certFile: cert,
        keyFile: key,
        signing: this.opendkim ? { listenPort: signingPort, milter: this.opendkim.milter } : undefined,
      });
      await this.postfix.start();
      if (runs('postfix')) route('postfix', { host: '127.0.0.1', port: listenPort });
      if (runs('postfix-dkim')) route('postfix-dkim', { host: '127.0.0.1', port: signingPort });
    }
    this.proxy = await Proxy.start(routes);
    this.dkimPasses = dkimChecker(world.env.DNS_SERVERS!, world.domain);
  }

  private route(system: System): number {
    return this.routes.get(system)!;
  }

  /** The processes metered as the system itself. */
  private systemProcesses(system: System): Record<string, number[]> {
    if (system === 'herald') return this.heraldProcesses;
    const postfix = { postfix: [this.postfix!.masterPid()] };
    return system === 'postfix-dkim' ? { ...postfix, opendkim: [this.opendkim!.pid] } : postfix;
  }

  /** Waits until the sink has `base + expected` messages, or nothing arrived for STALL_MS. */
  private async waitSink(base: number, expected: number): Promise<void> {
    let last = -1;
    let since = Date.now();
    for (;;) {
      const got = this.sink!.received - base;
      if (got >= expected) return;
      if (got !== last) {
        last = got;
        since = Date.now();
      } else if (Date.now() - since > STALL_MS) {
        process.stderr.write(`bench: gave up waiting: the sink has ${got} of ${expected} messages, nothing new for ${STALL_MS / 1000} s\n`);
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Sends `messages` through one system; measured unless it is the warm-up. */
  async phase(system: System, messages: number, measured: boolean): Promise<PhaseResult> {
    const label = `${system}${measured ? '' : ' (warm-up)'}`;
    process.stderr.write(`bench: ${label}: ${messages} messages of ${options.size} bytes over ${Math.min(options.sessions, messages)} sessions\n`);
    const sink = this.sink!;
    const base = sink.received;
    const timelineFrom = sink.timeline.length;
    const shimBefore = (await this.proxy!.stats())[this.route(system)]!;
    const emailsBefore = system === 'herald' ? await this.world.countEmails() : 0;
    const endCpu = meterPhase(this.systemProcesses(system), this.sink!.pid, this.proxy!.pid);
    const port = this.proxy!.ports[this.route(system)]!;
    const source = await smtpSource(port, `bench@${this.world.domain}`, messages, options.sessions, options.size);
    if (source.code !== 0) process.stderr.write(`bench: ${label}: smtp-source exited ${source.code}: ${source.stderr.slice(0, 500)}\n`);
    // Every message got its 2xx when smtp-source exits 0; otherwise wait for whatever arrives.
    await this.waitSink(base, source.code === 0 ? messages : Number.MAX_SAFE_INTEGER);
    const cpu = endCpu();
    const timeline = sink.timeline.slice(timelineFrom).map(([at, n]): [number, number] => [at, n - base]);
    const delivered = sink.received - base;
    const lastAt = timeline.at(-1)?.[0] ?? source.exitedAt;
    const seconds = (lastAt - source.startedAt) / 1000;
    const at = (count: number) => timeline.find(([, n]) => n >= count)?.[0] ?? NaN;
    const lo = Math.ceil(delivered * 0.1);
    const hi = Math.floor(delivered * 0.9);
    const middle80PerSecond = (hi - lo) / ((at(hi) - at(lo)) / 1000);
    const integrity = await checkDumps(this.dumpDir, delivered, this.dkimPasses!);
    const shimAfter = (await this.proxy!.stats())[this.route(system)]!;
    const shim = {
      connections: shimAfter.connections - shimBefore.connections,
      handshakeFailures: shimAfter.handshakeFailures - shimBefore.handshakeFailures,
      errors: shimAfter.errors,
    };
    const server = system === 'herald' ? await this.heraldState(emailsBefore) : { queued: await this.postfixQueueDrained() };
    const accepted = source.code === 0 ? messages : NaN;
    const ok =
      source.code === 0 &&
      delivered === accepted &&
      shim.handshakeFailures === 0 &&
      (integrity.dumped === null || (integrity.dumped === delivered && integrity.duplicates === 0 && integrity.badBodies === 0)) &&
      // Herald and Postfix with OpenDKIM sign every message, and mailauth must find each signature good.
      (integrity.dumped === null || system === 'postfix' || integrity.dkimPass === delivered) &&
      (system !== 'herald' || (server.emails === accepted && server.delivered === accepted)) &&
      (system === 'herald' || server.queued === 0);
    return {
      system,
      messages,
      sessions: Math.min(options.sessions, messages),
      size: options.size,
      source: {
        code: source.code,
        stderr: source.stderr,
        seconds: (source.exitedAt - source.startedAt) / 1000,
        acceptedPerSecond: messages / ((source.exitedAt - source.startedAt) / 1000),
      },
      delivered,
      deliveredPerSecond: delivered / seconds,
      middle80PerSecond,
      seconds,
      drainSeconds: Math.max(0, (lastAt - source.exitedAt) / 1000),
      integrity,
      shim,
      server,
      cpu,
      ok,
    };
  }

  /** Messages left in Postfix's queue: its qmgr removes a queue file just after the sink's 250, so wait up to 10 s for 0. */
  private async postfixQueueDrained(): Promise<number> {
    for (let i = 0; ; i++) {
      const queued = await this.postfix!.queued();
      if (queued === 0 || i >= 100) return queued;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async heraldState(emailsBefore: number): Promise<Record<string, unknown>> {
    const schema = `"${this.world.config.DATABASE_SCHEMA}"`;
    const emails = (await this.world.countEmails()) - emailsBefore;
    // Recipients of the phase's emails: the newest `emails` rows.
    const rows = (
      await this.pg!.query<{ status: string; n: string }>(
        `SELECT r.status, count(*) AS n FROM ${schema}.email_recipients r
           WHERE r.email_id IN (SELECT id FROM ${schema}.emails ORDER BY created_at DESC LIMIT $1) GROUP BY r.status`,
        [Math.max(emails, 0)],
      )
    ).rows;
    const statuses = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>;
    return { emails, delivered: statuses.delivered ?? 0, statuses };
  }

  private tornDown: Promise<void> | null = null;

  tearDown(): Promise<void> {
    this.tornDown ??= this.stopAll();
    return this.tornDown;
  }

  private async stopAll(): Promise<void> {
    await this.proxy?.stop().catch(() => undefined);
    await this.smtp?.stop().catch(() => undefined);
    for (const w of this.workers) await w.stop().catch(() => undefined);
    await this.api?.stop().catch(() => undefined);
    await this.postfix?.stop().catch((e: Error) => process.stderr.write(`bench: stopping Postfix: ${e.message}\n`));
    await this.opendkim?.stop().catch(() => undefined);
    await this.sink?.stop().catch(() => undefined);
    await this.pg?.end().catch(() => undefined);
    if (!options.keep) {
      if (this.dumpDir) rmSync(this.dumpDir, { recursive: true, force: true });
      if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
      await this.world.cleanup();
    }
  }
}
