// The SMTP relay benchmark (SMTP.md beside it). Postfix's smtp-source sends the same load, in one
// run, through two relays into the same Postfix smtp-sink:
//   herald:  smtp-source → submission shim (STARTTLS + AUTH PLAIN herald/<API key>) → `herald smtp`
//            (Postgres, NATS) → `herald worker` (MX lookup on the bench's DNS, DKIM) → smtp-sink;
//   postfix: smtp-source → the same shim (STARTTLS; loopback is in mynetworks) → a private Postfix
//            instance, queue on disk → relayhost = smtp-sink.
// smtp-source speaks neither STARTTLS nor AUTH, hence the shim (bench-smtp-proxy.ts, a child
// process metered apart); SMTP.md says why. Delivered/s = messages the sink received ÷ (last
// receipt − smtp-source's start); the ratio Herald/Postfix is held against the 2×.
// Options: --messages N (5000), --sessions N (20), --size BYTES (10240, smtp-source -l),
// --warmup N (200 messages through each system first, not measured), --workers N (1),
// --only herald|postfix, --profile (V8 CPU profiles of herald smtp and worker into
// test/bench/results/profiles), --no-dump (count at the sink only: no duplicate/DKIM check), --keep
// (leave the schema, keys, streams and temp dirs), --no-save.
import './aliases';
import { ChildProcess, execFile, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freeSharedPort } from '@herald/testing';
import { DIST } from './aliases';
import { PostfixInstance } from './bench-postfix';
import { freePort, heraldCli, ServerProcess, startHeraldApi, startHeraldRole } from './bench-processes';
import { saveResults } from './bench-report';
import type { ProxyMessageToParent, ProxyStats } from './bench-smtp-proxy';
import { BenchWorld } from './bench-world';
import { backgroundLoad, meterCpu } from './cpu-meter';
import { reapedChildrenCpu, treeCpu } from './process-tree-cpu';

const run = promisify(execFile);
const TARGET_RATIO = 2;
/** A phase gives up when the sink received nothing new for this long. */
const STALL_MS = 30_000;
const SINK_HOST = '127.0.0.2';
const SINK_MX = 'mx.sink.bench.test';
const RCPT_DOMAIN = 'rcpt.bench.test';

type System = 'herald' | 'postfix';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} needs a whole number`);
  return value;
}
const onlyArg = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
if (onlyArg !== null && onlyArg !== 'herald' && onlyArg !== 'postfix') throw new Error('--only takes herald or postfix');
const options = {
  messages: option('messages', 5_000),
  sessions: option('sessions', 20),
  size: option('size', 10_240),
  warmup: option('warmup', 200),
  workers: option('workers', 1),
  only: onlyArg as System | null,
  dump: !process.argv.includes('--no-dump'),
  profile: process.argv.includes('--profile'),
  keep: process.argv.includes('--keep'),
  save: !process.argv.includes('--no-save'),
};
if (options.messages < 1 || options.sessions < 1) throw new Error('--messages and --sessions must be at least 1');

/** Postfix's smtp-sink as a child: `-c` prints running counters (`mesg=N`) at every ".", which give the receipt times. */
class Sink {
  received = 0;
  /** [Date.now(), messages received so far] at each counter update. */
  timeline: [number, number][] = [];
  private constructor(
    private readonly child: ChildProcess,
    readonly dumpDir: string | null,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(host: string, port: number, dumpDir: string | null): Promise<Sink> {
    // -u: smtp-sink refuses to run as root without dropping privileges; -d: one file per message (tmpfs).
    const args = ['-u', 'nobody', '-c', ...(dumpDir ? ['-d', `${dumpDir}/%H%M%S.`] : []), '-m', '1000', `${host}:${port}`, '1024'];
    const child = spawn('smtp-sink', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const sink = new Sink(child, dumpDir);
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const at = Date.now();
      const text = partial + chunk.toString('latin1');
      const i = text.lastIndexOf('\r');
      partial = text.slice(i + 1);
      const m = /mesg=(\d+)\s*$/.exec(text.slice(0, Math.max(0, i)));
      if (m && Number(m[1]) !== sink.received) {
        sink.received = Number(m[1]);
        sink.timeline.push([at, sink.received]);
      }
    });
    // listening: a TCP connect succeeds
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`smtp-sink exited: ${err}`);
      const ok = await new Promise<boolean>((resolve) => {
        const s = netConnect({ host, port });
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      });
      if (ok) break;
      if (i > 100) throw new Error(`smtp-sink did not listen on ${host}:${port}: ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // that probe was a session, not a message: nothing to count
    return sink;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }
}

/** The submission shim (bench-smtp-proxy.ts) in a child process. */
class Proxy {
  private constructor(
    private readonly child: ChildProcess,
    readonly ports: number[],
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(routes: { host: string; port: number; user?: string; pass?: string }[]): Promise<Proxy> {
    const child = fork(join(__dirname, 'bench-smtp-proxy.js'), [], {
      env: { ...process.env, BENCH_PROXY_ROUTES: JSON.stringify(routes.map((r) => ({ listen: 0, ...r }))) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('error', () => undefined);
    const ready = await Promise.race([
      once(child, 'message') as Promise<[ProxyMessageToParent]>,
      once(child, 'exit').then(() => {
        throw new Error('the submission shim exited before it listened');
      }),
    ]);
    const message = ready[0];
    if (message.type !== 'ready') throw new Error('the submission shim did not say ready');
    return new Proxy(child, message.ports);
  }

  async stats(): Promise<ProxyStats[]> {
    const reply = new Promise<ProxyStats[]>((resolve) => {
      const on = (m: ProxyMessageToParent) => {
        if (m.type !== 'stats') return;
        this.child.off('message', on);
        resolve(m.stats);
      };
      this.child.on('message', on);
    });
    this.child.send({ type: 'stats' });
    return reply;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.disconnect();
    await exited;
  }
}

interface SourceRun {
  code: number | null;
  stderr: string;
  startedAt: number;
  exitedAt: number;
}

/** smtp-source: `sessions` parallel sessions, each sending its share over one connection (-d). */
async function smtpSource(port: number, from: string, messages: number, sessions: number, size: number): Promise<SourceRun> {
  const args = ['-s', String(Math.min(sessions, messages)), '-m', String(messages), '-l', String(size), '-d', '-N', '-M', 'client.bench.test'];
  args.push('-f', from, '-t', `user@${RCPT_DOMAIN}`, '-S', 'Herald SMTP bench', `127.0.0.1:${port}`);
  const startedAt = Date.now();
  const child = spawn('smtp-source', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr: stderr.trim(), startedAt, exitedAt: Date.now() };
}

interface Integrity {
  /** Messages the sink received (its counter). */
  received: number;
  /** From the dump files (null with --no-dump). */
  dumped: number | null;
  distinctMessageIds: number | null;
  duplicates: number | null;
  withDkimSignature: number | null;
  /** Messages whose body is not smtp-source's payload of the requested length. */
  badBodies: number | null;
}

interface CpuSeconds {
  /** Herald: smtp, api, worker(s); Postfix: every daemon of the instance. */
  system: Record<string, number>;
  sink: number;
  shim: number;
  smtpSource: number;
  bench: number;
  postgres: number;
  redis: number;
  nats: number;
  other: number;
  idle: number;
}

interface PhaseResult {
  system: System;
  messages: number;
  sessions: number;
  size: number;
  /** smtp-source's exit: 0 means every message got a 2xx reply to its DATA. */
  source: { code: number | null; stderr: string; seconds: number; acceptedPerSecond: number };
  delivered: number;
  deliveredPerSecond: number;
  middle80PerSecond: number;
  /** First submit (smtp-source start) to the last receipt at the sink. */
  seconds: number;
  /** After smtp-source finished, how long until the last receipt (the relay's queue draining). */
  drainSeconds: number;
  integrity: Integrity;
  shim: ProxyStats;
  /** Herald: rows and recipient statuses in Postgres; Postfix: messages left in its queue. */
  server: Record<string, unknown>;
  cpu: CpuSeconds | null;
  ok: boolean;
}

class Bench {
  readonly world = new BenchWorld();
  tmp = '';
  dumpDir: string | null = null;
  sink: Sink | null = null;
  proxy: Proxy | null = null;
  postfix: PostfixInstance | null = null;
  api: ServerProcess | null = null;
  smtp: ServerProcess | null = null;
  workers: ServerProcess[] = [];
  token = '';
  private pg: Client | null = null;

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
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=smtp.bench.test']);

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
    if (options.only !== 'postfix') {
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
      this.api = await startHeraldApi(env, 1);
      await world.verifyDomain(this.api.url, this.token);
      const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(DIST, '..', 'test', 'bench', 'results', 'profiles')}`] : [];
      for (let i = 0; i < options.workers; i++) this.workers.push(await startHeraldRole(env, 'worker', nodeArgs));
      this.smtp = await startHeraldRole(env, 'smtp', nodeArgs);
      routes.push({ host: '127.0.0.1', port: smtpPort, user: 'herald', pass: this.token });
      this.pg = new Client({ connectionString: world.config.DATABASE_URL });
      await this.pg.connect();
    }
    if (options.only !== 'herald') {
      const listenPort = await freePort();
      this.postfix = new PostfixInstance({ dir: join(this.tmp, 'postfix'), listenPort, relayHost: SINK_HOST, relayPort: sinkPort, certFile: cert, keyFile: key });
      await this.postfix.start();
      routes.push({ host: '127.0.0.1', port: listenPort });
    }
    this.proxy = await Proxy.start(routes);
  }

  private route(system: System): number {
    return system === 'herald' || options.only === 'postfix' ? 0 : 1;
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

  private meter(system: System): () => CpuSeconds | null {
    const groups: Record<string, number[]> = system === 'herald' ? this.heraldProcesses : { postfix: [this.postfix!.masterPid()] };
    const sum = (pids: number[]) => pids.reduce((a, pid) => a + treeCpu(pid), 0);
    const before = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, sum(pids)]));
    const sink0 = treeCpu(this.sink!.pid);
    const shim0 = treeCpu(this.proxy!.pid);
    const reaped0 = reapedChildrenCpu();
    const machine = meterCpu(process.pid);
    return () => {
      const split = machine();
      if (!split) return null;
      const systemCpu = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, sum(pids) - before[k]!]));
      const sink = treeCpu(this.sink!.pid) - sink0;
      const shim = treeCpu(this.proxy!.pid) - shim0;
      const smtpSourceCpu = reapedChildrenCpu() - reaped0;
      const busy = split.server + split.loadGenerator + split.postgres + split.redis + split.nats + split.other;
      const known = Object.values(systemCpu).reduce((a, b) => a + b, 0) + sink + shim + smtpSourceCpu + split.loadGenerator + split.postgres + split.redis + split.nats;
      return {
        system: systemCpu,
        sink,
        shim,
        smtpSource: smtpSourceCpu,
        bench: split.loadGenerator,
        postgres: split.postgres,
        redis: split.redis,
        nats: split.nats,
        other: Math.max(0, busy - known),
        idle: split.idle,
      };
    };
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
    const endCpu = this.meter(system);
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
    const integrity = this.checkDumps(delivered);
    const shimAfter = (await this.proxy!.stats())[this.route(system)]!;
    const shim = { connections: shimAfter.connections - shimBefore.connections, handshakeFailures: shimAfter.handshakeFailures - shimBefore.handshakeFailures, errors: shimAfter.errors };
    const server = system === 'herald' ? await this.heraldState(emailsBefore) : { queued: await this.postfixQueueDrained() };
    const accepted = source.code === 0 ? messages : NaN;
    const ok =
      source.code === 0 &&
      delivered === accepted &&
      shim.handshakeFailures === 0 &&
      (integrity.dumped === null || (integrity.dumped === delivered && integrity.duplicates === 0 && integrity.badBodies === 0)) &&
      (system !== 'herald' || (server.emails === accepted && server.delivered === accepted)) &&
      (system !== 'postfix' || server.queued === 0);
    return {
      system,
      messages,
      sessions: Math.min(options.sessions, messages),
      size: options.size,
      source: { code: source.code, stderr: source.stderr, seconds: (source.exitedAt - source.startedAt) / 1000, acceptedPerSecond: messages / ((source.exitedAt - source.startedAt) / 1000) },
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

  /** Reads and removes the sink's dump files of the phase: one file per message. */
  private checkDumps(received: number): Integrity {
    const result: Integrity = { received, dumped: null, distinctMessageIds: null, duplicates: null, withDkimSignature: null, badBodies: null };
    if (!this.dumpDir) return result;
    const ids = new Set<string>();
    let dumped = 0;
    let dkim = 0;
    let badBodies = 0;
    for (const name of readdirSync(this.dumpDir)) {
      const file = join(this.dumpDir, name);
      const text = readFileSync(file, 'latin1');
      rmSync(file);
      dumped++;
      const split = text.indexOf('\n\n');
      const head = text.slice(0, split);
      const id = /^Message-Id:\s*(.+)$/im.exec(head)?.[1]?.trim() ?? `(none ${dumped})`;
      ids.add(id);
      if (/^DKIM-Signature:/im.test(head)) dkim++;
      // smtp-source's payload: `size` bytes of numbered lines of X (lines end with \n in the dump),
      // then smtp-sink's blank line. Herald may re-encode the body; count payload bytes, not layout.
      const body = text.slice(split + 2).replace(/\r?\n/g, '');
      const payload = body.replace(/[^0-9X]/g, '').length;
      if (Math.abs(payload - options.size) > options.size * 0.05) badBodies++;
    }
    return { received, dumped, distinctMessageIds: ids.size, duplicates: dumped - ids.size, withDkimSignature: dkim, badBodies };
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
    await this.sink?.stop().catch(() => undefined);
    await this.pg?.end().catch(() => undefined);
    if (!options.keep) {
      if (this.dumpDir) rmSync(this.dumpDir, { recursive: true, force: true });
      if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
      await this.world.cleanup();
    }
  }
}

const n = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';

function print(date: string, machine: Record<string, unknown>, results: PhaseResult[], ratio: number): void {
  const out: string[] = [''];
  out.push(`Herald SMTP relay bench, ${date}`);
  out.push(`  machine: ${machine.cpus as number} × ${machine.cpu as string}, Node ${machine.node as string}; everything shares it`);
  out.push(`  Postgres ${machine.postgres as string} (synchronous_commit=${machine.synchronousCommit as string}), NATS ${machine.nats as string}; Postfix queue: ${machine.postfixQueue as string}`);
  const bg = machine.backgroundLoad as number | null;
  if (bg !== null) out.push(`  machine busy before the bench: ${n(bg * 100)}%${bg > 0.15 ? '  WARNING: other work is running; figures are low and noisy' : ''}`);
  out.push(`  load: smtp-source -s ${options.sessions} -m ${options.messages} -l ${options.size} -d -N, through the STARTTLS/AUTH shim, into one smtp-sink`);
  out.push(`  herald: herald smtp + api + ${options.workers} × worker (production mode); postfix: private instance, queue on disk, relayhost = the sink`);
  out.push('');
  out.push(`  ${''.padEnd(10)}${'messages'.padStart(9)}${'submit/s'.padStart(10)}${'deliv/s'.padStart(9)}${'mid80/s'.padStart(9)}${'seconds'.padStart(9)}${'drain s'.padStart(9)}  integrity`);
  for (const r of results) {
    const i = r.integrity;
    const check =
      `${r.ok ? 'OK' : 'NOT OK'}: smtp-source exit ${r.source.code}, sink ${n(r.delivered)}` +
      (i.dumped !== null ? `, ${n(i.dumped)} dumped, ${i.duplicates} duplicate Message-Ids, ${i.badBodies} bad bodies, ${i.withDkimSignature} DKIM-signed` : '') +
      (r.shim.handshakeFailures ? `, ${r.shim.handshakeFailures} shim handshake failures ${JSON.stringify(r.shim.errors)}` : '') +
      `, ${JSON.stringify(r.server)}`;
    out.push(
      `  ${r.system.padEnd(10)}${n(r.messages).padStart(9)}${n(r.source.acceptedPerSecond).padStart(10)}${n(r.deliveredPerSecond).padStart(9)}` +
        `${n(r.middle80PerSecond).padStart(9)}${n(r.seconds, 1).padStart(9)}${n(r.drainSeconds, 1).padStart(9)}  ${check}`,
    );
  }
  out.push('  (submit/s = messages ÷ smtp-source run time; deliv/s = sink receipts ÷ (last receipt − smtp-source start);');
  out.push('   mid80/s = the middle 80% of receipts ÷ the time between the 10th and 90th percentile receipt)');
  out.push('');
  if (Number.isFinite(ratio)) {
    out.push(`  Herald ÷ Postfix delivered/s = ${n(ratio, 2)}×   target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'MET' : 'MISSED'}`);
    out.push('');
  }
  out.push('  CPU µs per delivered message, by process ("system" = Herald smtp/api/worker, or all Postfix daemons):');
  for (const r of results) {
    const c = r.cpu;
    if (!c) continue;
    const us = (v: number) => n((v * 1e6) / Math.max(1, r.delivered));
    const parts = Object.entries(c.system).map(([k, v]) => `${k} ${us(v)}`);
    const busy = Object.values(c.system).reduce((a, b) => a + b, 0) + c.sink + c.shim + c.smtpSource + c.bench + c.postgres + c.redis + c.nats + c.other;
    out.push(
      `  ${r.system.padEnd(10)}${parts.join(', ')} | sink ${us(c.sink)}, shim ${us(c.shim)}, smtp-source ${us(c.smtpSource)}, bench ${us(c.bench)}, ` +
        `postgres ${us(c.postgres)}, redis ${us(c.redis)}, nats ${us(c.nats)}, other ${us(c.other)} | total ${us(busy)}, idle ${n((c.idle / (busy + c.idle)) * 100)}%`,
    );
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The file system type of a directory (the Postfix queue must be on disk, not tmpfs). */
async function fsType(dir: string): Promise<string> {
  return run('stat', ['-f', '-c', '%T', dir]).then(
    (r) => r.stdout.trim(),
    () => 'unknown',
  );
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('the SMTP bench runs smtp-sink (-u nobody) and a private Postfix instance: run it as root');
  const background = await backgroundLoad();
  const bench = new Bench();
  process.once('SIGINT', () => void bench.tearDown().finally(() => process.exit(130)));
  try {
    await bench.setUp();
    const systems: System[] = options.only ? [options.only] : ['herald', 'postfix'];
    if (options.warmup > 0) for (const s of systems) await bench.phase(s, options.warmup, false);
    const results: PhaseResult[] = [];
    for (const s of systems) results.push(await bench.phase(s, options.messages, true));
    const date = new Date().toISOString();
    const postfixQueue = bench.postfix ? `${bench.tmp} (${await fsType(bench.tmp)})` : 'not run';
    const machine = { ...(await bench.world.describeMachine()), backgroundLoad: background, postfixQueue };
    const h = results.find((r) => r.system === 'herald');
    const p = results.find((r) => r.system === 'postfix');
    const ratio = h && p ? h.deliveredPerSecond / p.deliveredPerSecond : NaN;
    print(date, machine, results, ratio);
    if (options.save) {
      const file = saveResults('smtp-bench', date, { date, machine, options, target: { ratio: TARGET_RATIO, met: ratio >= TARGET_RATIO }, ratio, results });
      process.stdout.write(`  results: ${file}\n`);
    }
    return results.every((r) => r.ok) ? 0 : 1;
  } finally {
    await bench.tearDown();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`smtp-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
