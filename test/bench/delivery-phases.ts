import { join } from 'node:path';
import { jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { freeSharedPort } from '@herald/testing';
import { DIST } from './aliases';
import type { SinkTake } from './bench-mx-sinks';
import { heraldCli, ServerProcess, startHeraldApi, startHeraldRole } from './bench-processes';
import { BenchWorld } from './bench-world';
import { submitAtOnce, submitPaced, type Submission } from './delivery-load';
import { analysePhase, meterPhase, type PhaseCpu, type PhaseResult } from './delivery-measure';
import { domainMx, domainName, DOMAINS, FINAL, options, SENDERS_DURABLE, sinkHost, sinkMx, STALL_MS, WORKER_NODE_OPTIONS } from './delivery-options';
import { SinkProcess } from './delivery-sinks';
import { residentMemory } from './process-memory';

/** The delivery bench's stack (API, workers, sinks) and its phases. */
export class Bench {
  readonly world = new BenchWorld();
  private pg!: Client;
  private api: ServerProcess | null = null;
  private workers: ServerProcess[] = [];
  private sinks: SinkProcess | null = null;
  private token = '';
  private lastTake: SinkTake | null = null;
  private nc: NatsConnection | null = null;
  private jsm!: JetStreamManager;
  private env: NodeJS.ProcessEnv = {};

  private get schema(): string {
    return `"${this.world.config.DATABASE_SCHEMA}"`;
  }

  async setUp(): Promise<{ port: number; command: string }> {
    const world = this.world;
    await world.start();
    const hosts = Array.from({ length: options.sinks }, (_, i) => sinkHost(i));
    const port = await freeSharedPort(hosts);
    for (let i = 0; i < options.sinks; i++) world.publish(sinkMx(i), 'A', [sinkHost(i)]);
    // Domains sharing an MX host share a destination (and its connection limits), as at big providers;
    // in the backlog mode each domain has an MX host of its own (destinations are keyed by MX host).
    for (let d = 0; d < DOMAINS; d++) {
      if (options.only !== 'backlog') world.publish(domainName(d), 'MX', [{ exchange: sinkMx(d % options.sinks), priority: 10 }]);
      else {
        world.publish(domainName(d), 'MX', [{ exchange: domainMx(d), priority: 10 }]);
        world.publish(domainMx(d), 'A', [sinkHost(d % options.sinks)]);
      }
    }
    this.sinks = await SinkProcess.start(hosts, port);

    const env: NodeJS.ProcessEnv = (this.env = {
      ...world.env,
      DELIVERY_PORT: String(port),
      DELIVERY_HOSTNAME: 'mta.us-east-1.herald.test',
      REGION_SPF: 'us-east-1=ip4:127.0.0.0/8',
    });
    await heraldCli(env, 'migrate');
    const team = await heraldCli<{ id: string }>(
      env,
      'team',
      'create',
      '--name',
      'Delivery bench',
      '--plan',
      'scale-2.5m',
      '--rate-limit',
      '1000000',
    );
    this.token = (await heraldCli<{ token: string }>(env, 'key', 'create', '--team', team.id, '--name', 'Bench key')).token;
    this.api = await startHeraldApi(env, 1);
    await world.verifyDomain(this.api.url, this.token);
    // The backlog mode starts them once the backlog is on the stream.
    if (options.only !== 'backlog') await this.startWorkers();
    this.pg = new Client({ connectionString: world.config.DATABASE_URL });
    await this.pg.connect();
    this.nc = await connect({ servers: world.config.NATS_URL });
    this.jsm = await jetstreamManager(this.nc);
    const heap = WORKER_NODE_OPTIONS ? `NODE_OPTIONS=${WORKER_NODE_OPTIONS} (its deployment's)` : "V8's defaults for this machine";
    return { port, command: `node bin/herald.js api + ${options.workers} × node bin/herald.js worker with ${heap}` };
  }

  private async startWorkers(): Promise<void> {
    const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(DIST, '..', 'test', 'bench', 'results', 'profiles')}`] : [];
    const env = WORKER_NODE_OPTIONS ? { ...this.env, NODE_OPTIONS: WORKER_NODE_OPTIONS } : this.env;
    for (let i = 0; i < options.workers; i++) this.workers.push(await startHeraldRole(env, 'worker', nodeArgs));
  }

  /** Waits until the send stream holds `count` more messages than `from`, or stops growing for STALL_MS. */
  private async waitPublished(from: number, count: number): Promise<void> {
    let last = -1;
    let since = Date.now();
    for (;;) {
      const published = (await this.streamState()).published - from;
      if (published >= count) return;
      if (published !== last) {
        last = published;
        since = Date.now();
      } else if (Date.now() - since > STALL_MS) throw new Error(`only ${published} of ${count} emails reached the send stream`);
      await new Promise((r) => setTimeout(r, 200));
    }
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
        process.stderr.write(
          `bench: gave up waiting: ${final} of ${ids.length} emails have a final status after ${STALL_MS / 1000} s without progress\n`,
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * A phase: submit, wait for every email's final status, analyse. A backlog phase submits with no
   * worker running, waits until the send stream holds every email, then starts the workers: its
   * CPU is metered from there, and the workers' resident memory is read at the end (peak and now).
   */
  async phase(name: string, submit: () => Promise<Submission & { behindMs?: number }>, rate?: number, backlog = false): Promise<PhaseResult> {
    process.stderr.write(`bench: ${name}\n`);
    const base = (await this.sinks!.ask('count')).received;
    const streamBefore = await this.streamState();
    let endCpu: () => PhaseCpu | null = backlog ? () => null : meterPhase(this.api!, this.workers, this.sinks!);
    const s = await submit();
    const ids = [...s.accepted.keys()];
    process.stderr.write(
      `bench: ${name}: ${ids.length} emails accepted in ${((s.lastAccept - s.firstSubmit) / 1000).toFixed(1)} s, waiting for delivery\n`,
    );
    let drainStart = 0;
    if (backlog) {
      await this.waitPublished(streamBefore.published, ids.length);
      process.stderr.write(`bench: ${name}: all on the send stream; starting ${options.workers} worker(s)\n`);
      drainStart = Date.now();
      await this.startWorkers();
      endCpu = meterPhase(this.api!, this.workers, this.sinks!);
    }
    await this.waitFinal(ids, base);
    const drainSeconds = (Date.now() - drainStart) / 1000;
    const cpu = endCpu();
    const memory = backlog ? this.workers.map((w) => residentMemory(w.pid)) : [];
    const take: SinkTake = await this.sinks!.ask('take');
    const streamAfter = await this.streamState();
    const stream = { published: streamAfter.published - streamBefore.published, redelivered: streamAfter.redelivered - streamBefore.redelivered };
    // The sink process counts over its life: this phase's share is the difference with the last take.
    const before = this.lastTake;
    this.lastTake = take;
    const result = await analysePhase(this.pg, this.schema, name, s, ids, take, before, cpu, rate);
    if (!backlog) return { ...result, stream };
    const workerMemory = memory.every((m) => m !== null) ? memory.map((m) => ({ peakMiB: m.peakMiB, endMiB: m.nowMiB })) : null;
    return { ...result, stream, backlog: { emails: ids.length, destinations: DOMAINS, drainSeconds, workerMemory } };
  }

  private async streamState(): Promise<{ published: number; redelivered: number }> {
    const published = (await this.jsm.streams.info(this.world.stream)).state.last_seq;
    const redelivered = await this.jsm.consumers.info(this.world.stream, SENDERS_DURABLE).then(
      (c) => c.num_redelivered,
      () => 0,
    );
    return { published, redelivered };
  }

  async run(): Promise<PhaseResult[]> {
    const domain = this.world.domain;
    const results: PhaseResult[] = [];
    if (options.only === null || options.only === 'saturation') {
      results.push(
        await this.phase(`saturation: ${options.emails.toLocaleString('en-US')} emails at once`, () =>
          submitAtOnce(this.api!, this.token, domain, options.emails),
        ),
      );
    }
    if (options.only === 'backlog') {
      const name = `backlog: ${options.backlog.toLocaleString('en-US')} emails, ${DOMAINS} destinations`;
      results.push(await this.phase(name, () => submitAtOnce(this.api!, this.token, domain, options.backlog), undefined, true));
      return results;
    }
    if (options.only === null || options.only === 'latency') {
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
