// The delivery benchmark (`npm run bench:delivery`; DELIVERY.md beside it). On this machine's
// Postgres, Redis and NATS, in its own schema, prefix and namespace, with a local DNS server, it
// runs `herald api` and N × `herald worker` as child processes and sends ~10 KB emails through
// POST /emails/batch, JetStream and the workers (DKIM-signed, over SMTP with STARTTLS) to local MX
// sinks (bench-mx-sinks.ts, a child process) spread over 50 recipient domains. Two phases:
//   saturation: --emails N (20,000) submitted as fast as the batch API takes them (100 per call);
//     delivered/s = delivered ÷ (last delivery at a sink − first accept), and the steady rate of
//     the middle 80% of deliveries; target ≥ 1,500/s.
//   latency: a steady offered load of --rate R emails/s (1,000) for --duration S (15), paced
//     batches of 10–100; accept-to-delivered p50/p99/max from Postgres (email_events
//     'email.delivered'.created_at − emails.created_at); target p99 < 500 ms.
// Each phase waits for every accepted email to reach a final status, checks that every one was
// delivered exactly once (sink Message-IDs and email_recipients), and records the CPU each
// process spent per delivered email. Exit code 1 when an email was lost, not delivered, delivered
// twice or a request failed; a missed target only prints MISSED.
// Options: --emails N, --rate R, --duration S, --warmup S (2, paced phase), --workers N (worker processes, 1), --sinks N (10),
// --connections N (batch requests in flight in the saturation phase, 8), --only saturation|latency,
// --profile (CPU profile of the worker(s) into test/bench/results/profiles), --keep (leave the
// schema, keys and streams), --no-save (no JSON in test/bench/results).
import './aliases';
import { ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { freeSharedPort } from '@herald/testing';
import { DIST } from './aliases';
import type { SinkMessageToParent, SinkTake } from './bench-mx-sinks';
import { sampleEmail } from './bench-load';
import { heraldCli, ServerProcess, startHeraldApi, startHeraldRole } from './bench-processes';
import { saveResults } from './bench-report';
import { BenchWorld } from './bench-world';
import { backgroundLoad, CpuSplit, meterCpu } from './cpu-meter';

const TARGETS = { deliveredPerSecond: 1_500, p99Ms: 500 };
const BATCH_SIZE = 100;
const DOMAINS = 50;
/** Final statuses of a recipient; `queued`, `sending` and `deferred` are still on their way. */
const FINAL = ['delivered', 'bounced', 'failed', 'suppressed'];
/** A phase gives up waiting when neither the sinks nor Postgres made progress for this long. */
const STALL_MS = 30_000;
/** The workers' durable consumer of the send stream (SENDERS_DURABLE in apps/worker/src/worker.app.ts). */
const SENDERS_DURABLE = 'senders';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
if (only !== null && only !== 'saturation' && only !== 'latency') throw new Error('--only takes saturation or latency');
const options = {
  emails: option('emails', 20_000),
  rate: option('rate', 500),
  duration: option('duration', 15),
  warmup: option('warmup', 2),
  workers: option('workers', 1),
  sinks: option('sinks', 10),
  connections: option('connections', 8),
  only,
  profile: process.argv.includes('--profile'),
  keep: process.argv.includes('--keep'),
  save: !process.argv.includes('--no-save'),
};

const domainName = (i: number) => `d${String(i + 1).padStart(2, '0')}.bench.test`;
const sinkHost = (i: number) => `127.0.0.${i + 2}`;
const sinkMx = (i: number) => `mx.sink${String(i + 1).padStart(2, '0')}.bench.test`;

// ~9 KB more of HTML and a ~3 KB text part on top of the API bench's ~1 KB receipt: a typical
// newsletter-sized transactional email (~10 KB of content, ~14 KB on the wire once encoded).
const EXTRA_HTML = Array.from(
  { length: 24 },
  (_, i) =>
    `<tr><td style="padding:6px 0;border-bottom:1px solid #eee">Usage line ${i + 1}: API requests in region us-east-1, ` +
    `tier ${i % 4}, billed per thousand</td><td style="text-align:right">${(i * 1.37).toFixed(2)}</td></tr>`,
).join('');
const HTML_TAIL = `<table style="width:100%;border-collapse:collapse;font-size:13px">${EXTRA_HTML}</table>`;
const TEXT = Array.from(
  { length: 24 },
  (_, i) => `Usage line ${i + 1}: API requests in region us-east-1, tier ${i % 4}, billed per thousand ... ${(i * 1.37).toFixed(2)}`,
).join('\n');

let emailNumber = 0;
/** The next email: one recipient, round-robin over the 50 domains. */
function nextEmail(domain: string): Record<string, unknown> {
  const n = emailNumber++;
  const base = sampleEmail(domain, n);
  return {
    ...base,
    to: [`user${n}@${domainName(n % DOMAINS)}`],
    html: (base.html as string).replace('</body></html>', `${HTML_TAIL}</body></html>`),
    text: `Your receipt #${100_000 + n}\n\n${TEXT}\n\n${TEXT}`,
  };
}

/** The sinks' child process (bench-mx-sinks.ts), asked over IPC. */
class SinkProcess {
  private constructor(private readonly child: ChildProcess) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(hosts: string[], port: number): Promise<SinkProcess> {
    const child = fork(join(__dirname, 'bench-mx-sinks.js'), [], {
      env: { ...process.env, BENCH_SINK_HOSTS: hosts.join(','), BENCH_SINK_PORT: String(port) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const sinks = new SinkProcess(child);
    // A send after the channel closed (teardown on Ctrl-C) is answered by `ask` rejecting, not by a crash.
    child.on('error', () => undefined);
    await Promise.race([
      sinks.ask('ready'),
      once(child, 'exit').then(() => {
        throw new Error('the sink process exited before it listened');
      }),
    ]);
    return sinks;
  }

  /** Sends `{type}` (unless it is 'ready') and resolves with the child's next message of that type. */
  ask<T extends SinkMessageToParent['type']>(type: T): Promise<Extract<SinkMessageToParent, { type: T }>> {
    return new Promise((resolve, reject) => {
      if (type !== 'ready' && !this.child.connected) return reject(new Error('the sink process is gone'));
      const onMessage = (message: SinkMessageToParent) => {
        if (message.type !== type) return;
        this.child.off('message', onMessage);
        resolve(message as Extract<SinkMessageToParent, { type: T }>);
      };
      this.child.on('message', onMessage);
      if (type !== 'ready') this.child.send({ type });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.disconnect();
    await exited;
  }
}

interface Submission {
  /** Accepted email id → Date.now() when its batch was answered 2xx. */
  accepted: Map<string, number>;
  firstSubmit: number;
  firstAccept: number;
  lastAccept: number;
  requests: number;
  /** `status` or error message → count. */
  failures: Record<string, number>;
}

const newSubmission = (): Submission => ({
  accepted: new Map(),
  firstSubmit: 0,
  firstAccept: 0,
  lastAccept: 0,
  requests: 0,
  failures: {},
});

async function postBatch(api: ServerProcess, token: string, domain: string, size: number, into: Submission): Promise<void> {
  const body = JSON.stringify(Array.from({ length: size }, () => nextEmail(domain)));
  if (!into.firstSubmit) into.firstSubmit = Date.now();
  into.requests++;
  try {
    const response = await fetch(`${api.url}/emails/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    const at = Date.now();
    if (!response.ok) {
      into.failures[response.status] = (into.failures[response.status] ?? 0) + 1;
      if (Object.values(into.failures).reduce((a, b) => a + b, 0) <= 3) process.stderr.write(`bench: POST /emails/batch ${response.status}: ${text.slice(0, 300)}\n`);
      return;
    }
    if (!into.firstAccept) into.firstAccept = at;
    into.lastAccept = at;
    for (const { id } of (JSON.parse(text) as { data: { id: string }[] }).data) into.accepted.set(id, at);
  } catch (error) {
    const key = (error as Error).message;
    into.failures[key] = (into.failures[key] ?? 0) + 1;
  }
}

/** `total` emails, 100 per call, `connections` calls in flight: as fast as the API takes them. */
async function submitAtOnce(api: ServerProcess, token: string, domain: string, total: number): Promise<Submission> {
  const s = newSubmission();
  let left = total;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (left > 0) {
        const size = Math.min(BATCH_SIZE, left);
        left -= size;
        await postBatch(api, token, domain, size, s);
      }
    }),
  );
  return s;
}

/** `rate` emails/s for `seconds`, as batches due on a fixed schedule (at most 32 calls in flight). */
async function submitPaced(api: ServerProcess, token: string, domain: string, rate: number, seconds: number): Promise<Submission & { behindMs: number }> {
  const s = newSubmission();
  const size = Math.max(10, Math.min(BATCH_SIZE, Math.round(rate / 20)));
  const batches = Math.ceil((rate * seconds) / size);
  const start = Date.now();
  const inFlight = new Set<Promise<void>>();
  let behindMs = 0;
  for (let i = 0; i < batches; i++) {
    const due = start + (i * size * 1000) / rate;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    while (inFlight.size >= 32) await Promise.race(inFlight);
    behindMs = Math.max(behindMs, Date.now() - due);
    const p: Promise<void> = postBatch(api, token, domain, size, s).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return { ...s, behindMs };
}

interface PhaseCpu {
  /** CPU-seconds by process over the phase. */
  seconds: { api: number; workers: number; sinks: number; bench: number; postgres: number; redis: number; nats: number; other: number; idle: number };
  wallSeconds: number;
}

/** Meters the API (with Postgres, Redis, NATS, this process and the rest), each worker and the sinks. */
function meterPhase(api: ServerProcess, workers: ServerProcess[], sinks: SinkProcess): () => PhaseCpu | null {
  const main = meterCpu(api.pid);
  const others = [...workers.map((w) => meterCpu(w.pid)), meterCpu(sinks.pid)];
  return () => {
    const split: CpuSplit | null = main();
    const [sinksCpu, ...workerCpu] = others.map((end) => end()?.server ?? 0).reverse();
    if (!split) return null;
    const workersCpu = workerCpu.reduce((a, b) => a + b, 0);
    return {
      seconds: {
        api: split.server,
        workers: workersCpu,
        sinks: sinksCpu,
        bench: split.loadGenerator,
        postgres: split.postgres,
        redis: split.redis,
        nats: split.nats,
        // cpu-meter's "other" is everything but the API and the services: take the workers and sinks out.
        other: Math.max(0, split.other - workersCpu - sinksCpu),
        idle: split.idle,
      },
      wallSeconds: split.seconds,
    };
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface PhaseResult {
  name: string;
  offered: { requests: number; failures: Record<string, number>; submitSeconds: number; acceptedPerSecond: number; behindMs?: number; rate?: number };
  accepted: number;
  delivered: { sinks: number; postgres: number; perSecond: number; middle80PerSecond: number; seconds: number; firstAfterMs: number };
  /** Send-stream messages published in the phase (the email id is the Nats-Msg-Id) and the consumer's redeliveries. */
  stream: { published: number; redelivered: number };
  /** Of the emails accepted after the warm-up (paced phase), or all (saturation). */
  latencyMs: { p50: number; p90: number; p99: number; max: number; samples: number };
  /** From the batch response to the sink's receipt, on the bench's clock. */
  clientLatencyMs: { p50: number; p99: number; max: number };
  integrity: {
    missingAtSinks: number;
    /** The first ten accepted ids no sink received. */
    missingIds: string[];
    unexpectedAtSinks: number;
    duplicatesAtSinks: number;
    duplicateDeliveredEvents: number;
    unsigned: number;
    plaintext: number;
    unidentified: number;
    /** SMTP connections the sinks accepted during the phase. */
    smtpConnections: number;
    statuses: Record<string, number>;
    notDelivered: { email_id: string; address: string; status: string; last_response: string | null }[];
  };
  cpu: PhaseCpu | null;
}

class Bench {
  readonly world = new BenchWorld();
  private pg!: Client;
  private api: ServerProcess | null = null;
  private workers: ServerProcess[] = [];
  private sinks: SinkProcess | null = null;
  private token = '';
  private lastTake: SinkTake | null = null;
  private nc: NatsConnection | null = null;
  private jsm!: JetStreamManager;

  private get schema(): string {
    return `"${this.world.config.DATABASE_SCHEMA}"`;
  }

  async setUp(): Promise<{ port: number; command: string }> {
    const world = this.world;
    await world.start();
    const hosts = Array.from({ length: options.sinks }, (_, i) => sinkHost(i));
    const port = await freeSharedPort(hosts);
    for (let i = 0; i < options.sinks; i++) world.publish(sinkMx(i), 'A', [sinkHost(i)]);
    // Domains sharing an MX host share a destination (and its connection limits), as at big providers.
    for (let d = 0; d < DOMAINS; d++) world.publish(domainName(d), 'MX', [{ exchange: sinkMx(d % options.sinks), priority: 10 }]);
    this.sinks = await SinkProcess.start(hosts, port);

    const env: NodeJS.ProcessEnv = {
      ...world.env,
      DELIVERY_PORT: String(port),
      DELIVERY_HOSTNAME: 'mta.us-east-1.herald.test',
      REGION_SPF: 'us-east-1=ip4:127.0.0.0/8',
    };
    await heraldCli(env, 'migrate');
    const team = await heraldCli<{ id: string }>(env, 'team', 'create', '--name', 'Delivery bench', '--plan', 'scale-2.5m', '--rate-limit', '1000000');
    this.token = (await heraldCli<{ token: string }>(env, 'key', 'create', '--team', team.id, '--name', 'Bench key')).token;
    this.api = await startHeraldApi(env, 1);
    await world.verifyDomain(this.api.url, this.token);
    const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(DIST, '..', 'test', 'bench', 'results', 'profiles')}`] : [];
    for (let i = 0; i < options.workers; i++) this.workers.push(await startHeraldRole(env, 'worker', nodeArgs));
    this.pg = new Client({ connectionString: world.config.DATABASE_URL });
    await this.pg.connect();
    this.nc = await connect({ servers: world.config.NATS_URL });
    this.jsm = await jetstreamManager(this.nc);
    return { port, command: `node bin/herald.js api + ${options.workers} × node bin/herald.js worker` };
  }

  /** Waits until the sinks hold every accepted email and Postgres has a final status for each, or progress stalls. */
  private async waitFinal(ids: string[], base: number): Promise<void> {
    let last = -1;
    let since = Date.now();
    const stalled = (progress: number) => {
      if (progress !== last) {
        last = progress;
        since = Date.now();
      }
      return Date.now() - since > STALL_MS;
    };
    // The sinks first (a cheap IPC count), so that Postgres is not polled during the run.
    for (;;) {
      const received = (await this.sinks!.ask('count')).received - base;
      if (received >= ids.length || stalled(received)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    last = -1;
    for (;;) {
      const sql = `SELECT count(*) AS n FROM ${this.schema}.email_recipients WHERE email_id = ANY($1::uuid[]) AND status = ANY($2::text[])`;
      const final = Number((await this.pg.query<{ n: string }>(sql, [ids, FINAL])).rows[0]!.n);
      if (final >= ids.length) return;
      if (stalled(final)) {
        process.stderr.write(`bench: gave up waiting: ${final} of ${ids.length} emails have a final status after ${STALL_MS / 1000} s without progress\n`);
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async phase(name: string, submit: () => Promise<Submission & { behindMs?: number }>, rate?: number): Promise<PhaseResult> {
    process.stderr.write(`bench: ${name}\n`);
    const base = (await this.sinks!.ask('count')).received;
    const streamBefore = await this.streamState();
    const endCpu = meterPhase(this.api!, this.workers, this.sinks!);
    const s = await submit();
    const ids = [...s.accepted.keys()];
    process.stderr.write(`bench: ${name}: ${ids.length} emails accepted in ${((s.lastAccept - s.firstSubmit) / 1000).toFixed(1)} s, waiting for delivery\n`);
    await this.waitFinal(ids, base);
    const cpu = endCpu();
    const take: SinkTake = await this.sinks!.ask('take');
    const streamAfter = await this.streamState();
    const stream = { published: streamAfter.published - streamBefore.published, redelivered: streamAfter.redelivered - streamBefore.redelivered };
    return { ...(await this.analyse(name, s, ids, take, cpu, rate)), stream };
  }

  private async streamState(): Promise<{ published: number; redelivered: number }> {
    const published = (await this.jsm.streams.info(this.world.stream)).state.last_seq;
    const redelivered = await this.jsm.consumers.info(this.world.stream, SENDERS_DURABLE).then(
      (c) => c.num_redelivered,
      () => 0,
    );
    return { published, redelivered };
  }

  private async analyse(
    name: string,
    s: Submission & { behindMs?: number },
    ids: string[],
    take: SinkTake,
    cpu: PhaseCpu | null,
    rate?: number,
  ): Promise<Omit<PhaseResult, 'stream'>> {
    // A paced phase's first `warmup` seconds open the SMTP connections and warm the JIT: their
    // emails are checked like the others but left out of the latency figures.
    const measuredFrom = rate === undefined ? 0 : s.firstSubmit + options.warmup * 1000;
    const measured = ids.filter((id) => s.accepted.get(id)! >= measuredFrom);
    const receivedAt = new Map<string, number>();
    let unexpected = 0;
    for (const [id, at] of take.receipts) {
      if (!s.accepted.has(id)) unexpected++;
      else if (!receivedAt.has(id)) receivedAt.set(id, at);
    }
    // The sink process counts over its life: this phase's share is the difference with the last take.
    const before = this.lastTake;
    this.lastTake = take;
    const delta = (key: 'duplicates' | 'unsigned' | 'plaintext' | 'unidentified' | 'connections') => take[key] - (before?.[key] ?? 0);
    const duplicates = delta('duplicates');
    const times = [...receivedAt.values()].sort((a, b) => a - b);
    const lastDelivery = times.at(-1) ?? s.firstAccept;
    const seconds = (lastDelivery - s.firstAccept) / 1000;
    const lo = Math.floor(times.length * 0.1);
    const hi = Math.max(lo, Math.ceil(times.length * 0.9) - 1);
    const middleSeconds = (times[hi]! - times[lo]!) / 1000;
    const clientLatency = [...receivedAt].filter(([id]) => s.accepted.get(id)! >= measuredFrom).map(([id, at]) => at - s.accepted.get(id)!);
    clientLatency.sort((a, b) => a - b);

    const statuses = Object.fromEntries(
      (
        await this.pg.query<{ status: string; n: string }>(
          `SELECT status, count(*) AS n FROM ${this.schema}.email_recipients WHERE email_id = ANY($1::uuid[]) GROUP BY status`,
          [ids],
        )
      ).rows.map((r) => [r.status, Number(r.n)]),
    ) as Record<string, number>;
    const notDelivered = (
      await this.pg.query<{ email_id: string; address: string; status: string; last_response: string | null }>(
        `SELECT email_id, address, status, last_response FROM ${this.schema}.email_recipients
          WHERE email_id = ANY($1::uuid[]) AND status <> 'delivered' ORDER BY status, email_id LIMIT 10`,
        [ids],
      )
    ).rows;
    const latencyRows = (
      await this.pg.query<{ ms: number; n: string }>(
        `SELECT extract(epoch FROM min(ev.created_at) - e.created_at) * 1000 AS ms, count(*) AS n
           FROM ${this.schema}.email_events ev JOIN ${this.schema}.emails e ON e.id = ev.email_id
          WHERE ev.type = 'email.delivered' AND ev.email_id = ANY($1::uuid[])
          GROUP BY e.id, e.created_at`,
        [measured],
      )
    ).rows;
    const latency = latencyRows.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const submitSeconds = (s.lastAccept - s.firstSubmit) / 1000;
    return {
      name,
      offered: {
        requests: s.requests,
        failures: s.failures,
        submitSeconds,
        acceptedPerSecond: ids.length / submitSeconds,
        ...(s.behindMs !== undefined ? { behindMs: s.behindMs } : {}),
        ...(rate !== undefined ? { rate } : {}),
      },
      accepted: ids.length,
      delivered: {
        sinks: receivedAt.size,
        postgres: statuses.delivered ?? 0,
        perSecond: receivedAt.size / seconds,
        middle80PerSecond: middleSeconds > 0 ? (hi - lo) / middleSeconds : NaN,
        seconds,
        firstAfterMs: (times[0] ?? NaN) - s.firstAccept,
      },
      latencyMs: { p50: percentile(latency, 50), p90: percentile(latency, 90), p99: percentile(latency, 99), max: latency.at(-1) ?? NaN, samples: latency.length },
      clientLatencyMs: { p50: percentile(clientLatency, 50), p99: percentile(clientLatency, 99), max: clientLatency.at(-1) ?? NaN },
      integrity: {
        missingAtSinks: ids.length - receivedAt.size,
        missingIds: ids.filter((id) => !receivedAt.has(id)).slice(0, 10),
        unexpectedAtSinks: unexpected,
        duplicatesAtSinks: duplicates,
        duplicateDeliveredEvents: latencyRows.reduce((sum, r) => sum + Number(r.n) - 1, 0),
        unsigned: delta('unsigned'),
        plaintext: delta('plaintext'),
        unidentified: delta('unidentified'),
        smtpConnections: delta('connections'),
        statuses,
        notDelivered,
      },
      cpu,
    };
  }

  async run(): Promise<PhaseResult[]> {
    const domain = this.world.domain;
    const results: PhaseResult[] = [];
    if (options.only !== 'latency') {
      results.push(await this.phase(`saturation: ${options.emails.toLocaleString('en-US')} emails at once`, () => submitAtOnce(this.api!, this.token, domain, options.emails)));
    }
    if (options.only !== 'saturation') {
      results.push(
        await this.phase(
          `latency: ${options.rate.toLocaleString('en-US')} emails/s for ${options.duration} s`,
          () => submitPaced(this.api!, this.token, domain, options.rate, options.warmup + options.duration),
          options.rate,
        ),
      );
    }
    return results;
  }

  private tornDown: Promise<void> | null = null;

  /** Stops the children and removes the schema, keys and streams; once, whoever calls it first (Ctrl-C or the end). */
  tearDown(): Promise<void> {
    this.tornDown ??= this.stopAll();
    return this.tornDown;
  }

  private async stopAll(): Promise<void> {
    for (const w of this.workers) await w.stop().catch(() => undefined);
    this.workers = [];
    await this.api?.stop().catch(() => undefined);
    this.api = null;
    await this.sinks?.stop().catch(() => undefined);
    this.sinks = null;
    await this.pg?.end().catch(() => undefined);
    await this.nc?.close().catch(() => undefined);
    if (!options.keep) await this.world.cleanup();
  }
}

const n = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';

function failed(r: PhaseResult): boolean {
  const i = r.integrity;
  return (
    r.accepted === 0 ||
    Object.keys(r.offered.failures).length > 0 ||
    i.missingAtSinks > 0 ||
    i.unexpectedAtSinks > 0 ||
    i.duplicatesAtSinks > 0 ||
    i.duplicateDeliveredEvents > 0 ||
    i.unidentified > 0 ||
    r.delivered.postgres !== r.accepted
  );
}

function print(date: string, machine: Record<string, unknown>, command: string, results: PhaseResult[]): void {
  const out: string[] = [''];
  out.push(`Herald delivery bench, ${date}`);
  out.push(`  machine: ${machine.cpus as number} × ${machine.cpu as string}, Node ${machine.node as string}; everything shares it (bench, API, workers, sinks, Postgres, Redis, NATS)`);
  out.push(`  Postgres ${machine.postgres as string} (synchronous_commit=${machine.synchronousCommit as string}), NATS ${machine.nats as string}`);
  const bg = machine.backgroundLoad as number | null;
  if (bg !== null) out.push(`  machine busy before the bench: ${n(bg * 100)}%${bg > 0.15 ? '  WARNING: other work is running; figures are low and noisy' : ''}`);
  out.push(`  ${command}; ${options.sinks} MX sinks (STARTTLS) for ${DOMAINS} domains, one child process; ~10 KB emails, 1 recipient, DKIM-signed`);
  out.push('');
  out.push(`  ${''.padEnd(34)}${'accepted'.padStart(9)}${'acc/s'.padStart(8)}${'deliv/s'.padStart(9)}${'mid80/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p90 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}`);
  for (const r of results) {
    out.push(
      `  ${r.name.padEnd(34)}${n(r.accepted).padStart(9)}${n(r.offered.acceptedPerSecond).padStart(8)}${n(r.delivered.perSecond).padStart(9)}` +
        `${n(r.delivered.middle80PerSecond).padStart(9)}${n(r.latencyMs.p50).padStart(8)}${n(r.latencyMs.p90).padStart(8)}${n(r.latencyMs.p99).padStart(8)}${n(r.latencyMs.max).padStart(8)}`,
    );
  }
  out.push('  (deliv/s = delivered ÷ (last sink receipt − first accept); mid80/s = the middle 80% of deliveries;');
  out.push(`   latency = email_events email.delivered created_at − emails.created_at, from Postgres; paced phase: after a ${options.warmup} s warm-up)`);
  out.push('');
  const sat = results.find((r) => r.name.startsWith('saturation'));
  const lat = results.find((r) => r.name.startsWith('latency'));
  if (sat) {
    const met = sat.delivered.perSecond >= TARGETS.deliveredPerSecond;
    out.push(`  target delivered/s ≥ ${n(TARGETS.deliveredPerSecond)} sustained:       ${n(sat.delivered.perSecond)}/s (middle 80% ${n(sat.delivered.middle80PerSecond)}/s)  ${met ? 'MET' : 'MISSED'}`);
  }
  if (lat) {
    const keptUp = lat.delivered.perSecond >= 0.9 * (lat.offered.rate ?? 0);
    const met = lat.latencyMs.p99 < TARGETS.p99Ms;
    out.push(
      `  target p99 < ${TARGETS.p99Ms} ms below saturation (${n(lat.offered.rate ?? 0)}/s): p99 ${n(lat.latencyMs.p99)} ms  ${met ? 'MET' : 'MISSED'}` +
        `${keptUp ? '' : `  (NB: delivered ${n(lat.delivered.perSecond)}/s, so ${n(lat.offered.rate ?? 0)}/s is not below saturation here)`}`,
    );
  }
  out.push('');
  out.push('  CPU µs per delivered email, by process; "other" is work that is not the bench\'s (noise on a shared machine):');
  out.push(`  ${''.padEnd(34)}${'api'.padStart(7)}${'worker'.padStart(8)}${'sinks'.padStart(7)}${'bench'.padStart(7)}${'postgres'.padStart(9)}${'redis'.padStart(7)}${'nats'.padStart(7)}${'other'.padStart(8)}${'total'.padStart(8)}${'idle'.padStart(6)}`);
  for (const r of results) {
    const c = r.cpu?.seconds;
    if (!c) {
      out.push(`  ${r.name}: CPU figures need Linux /proc`);
      continue;
    }
    const us = (v: number, w: number) => n((v * 1e6) / Math.max(1, r.delivered.sinks)).padStart(w);
    const busy = c.api + c.workers + c.sinks + c.bench + c.postgres + c.redis + c.nats + c.other;
    out.push(
      `  ${r.name.padEnd(34)}${us(c.api, 7)}${us(c.workers, 8)}${us(c.sinks, 7)}${us(c.bench, 7)}${us(c.postgres, 9)}${us(c.redis, 7)}${us(c.nats, 7)}${us(c.other, 8)}${us(busy, 8)}` +
        `${`${n((c.idle / (busy + c.idle)) * 100)}%`.padStart(6)}`,
    );
  }
  out.push('');
  for (const r of results) {
    const i = r.integrity;
    const ok = !failed(r);
    out.push(`  ${r.name}: ${ok ? 'OK' : 'NOT OK'}: accepted ${n(r.accepted)} in ${n(r.offered.requests)} calls (failures: ${JSON.stringify(r.offered.failures)}), ` +
      `at the sinks ${n(r.delivered.sinks)} (missing ${i.missingAtSinks}, duplicates ${i.duplicatesAtSinks}, unexpected ${i.unexpectedAtSinks}), ` +
      `delivered in Postgres ${n(r.delivered.postgres)} ${JSON.stringify(i.statuses)}, duplicate email.delivered events ${i.duplicateDeliveredEvents}; ` +
      `without DKIM-Signature ${i.unsigned}, not over TLS ${i.plaintext}; ${n(i.smtpConnections)} SMTP connections`);
    out.push(`    accept → sink receipt (bench clock): p50 ${n(r.clientLatencyMs.p50)} ms, p99 ${n(r.clientLatencyMs.p99)} ms, max ${n(r.clientLatencyMs.max)} ms` +
      `${r.offered.behindMs !== undefined ? `; pacing fell behind by up to ${n(r.offered.behindMs)} ms` : ''}`);
    out.push(`    first delivery ${n(r.delivered.firstAfterMs)} ms after the first accept; send stream: ${n(r.stream.published)} messages published, ${n(r.stream.redelivered)} redelivered to the workers`);
    for (const id of i.missingIds) out.push(`    missing at the sinks: ${id}`);
    for (const row of i.notDelivered) out.push(`    not delivered: ${row.email_id} ${row.address} ${row.status} ${row.last_response ?? ''}`);
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main(): Promise<number> {
  const background = await backgroundLoad();
  const bench = new Bench();
  process.once('SIGINT', () => void bench.tearDown().finally(() => process.exit(130)));
  try {
    const { command } = await bench.setUp();
    const results = await bench.run();
    const date = new Date().toISOString();
    const machine = { ...(await bench.world.describeMachine()), backgroundLoad: background };
    print(date, machine, command, results);
    if (options.save) {
      const file = saveResults('delivery-bench', date, { date, machine, command, options, targets: TARGETS, results });
      process.stdout.write(`  results: ${file}\n`);
    }
    return results.some(failed) ? 1 : 0;
  } finally {
    await bench.tearDown();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`delivery-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
