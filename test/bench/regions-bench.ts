// The regions benchmark of issue 15 (`npm run bench:regions`; README.md beside it). One machine
// stands in for two regions 50 ms apart (each way): A = us-east-1, where the API runs, and
// B = eu-west-1. A NATS supercluster of one node per region, each region's streams on its own node
// (NATS_PLACE_BY_REGION), gateways through delay proxies; A's email plane in the shared Postgres (a
// schema of the bench's own), B's in a database of its own on that server reached through a delay
// proxy; the control plane and the idempotency registry (Redis) in A. The delays and B's outage are
// made in a child process (regions-infra.ts). It measures on `herald api` at A:
//   1. POST /emails for an A domain, no Idempotency-Key, with no delay (the single-region figure);
//   2. the same with the delays (target: p50 and p99 within 10% of 1: no cross-region round trip);
//   3. the same with a unique Idempotency-Key per request (printed, with what it adds to 2);
//   4. POST /emails for a B domain, no key (printed: its email and send command are stored in B);
//   5. POST /emails/batch ×100 for the A domain with B up, then with B down (its database link
//      silent, its NATS node killed) twice, then with B up again (5a, 5b, 5b', 5a': the two
//      conditions at the same mean place in the run) (target: no fewer emails/s with B down);
//   6. beyond the issue, run between 4 and 5 while B is up: 2's load and a B-domain load at once,
//      whether B's slow requests hold A's back (printed);
//   7. beyond the issue, on a second `herald api` in B (B's database and NATS node its own, the
//      control database and Redis 50 ms away in A): POST /emails for a B domain, without and with
//      a key: what a client near B waits for (printed).
// Every email answered 2xx is then looked up in its region's database and counted on its region's
// stream. Exit code 1 when an accepted email is missing or a request failed; a missed target only
// prints MISSED. Options: --duration S (8), --warmup S (2, before each phase), --api-warmup S (5,
// once, before phase 1), --connections N (32),
// --batch-connections N (16), --mixed-connections N (8, phase 6's B load), --latency MS (50, each
// way), --no-save.
import './aliases';
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sendStreamName } from '@herald/bus';
import { load as loadFor, LoadFigures, sampleEmail } from './bench-load';
import { option } from './bench-options';
import { benchMain, heraldCli, ServerProcess, startHeraldApi } from './bench-processes';
import { saveResults } from './bench-report';
import { BenchWorld, withPg } from './bench-world';
import { backgroundLoad } from './cpu-meter';
import { Regions } from './regions-client';
import { printRegionsReport, type Durability, type Phase } from './regions-report';

const A = 'us-east-1';
const B = 'eu-west-1';
const BATCH_SIZE = 100;

const options = {
  seconds: option('duration', 8),
  warmup: option('warmup', 2),
  /** An unreported load before phase 1 (a fresh process is slower for its first seconds). */
  apiWarmup: option('api-warmup', 5),
  connections: option('connections', 32),
  batchConnections: option('batch-connections', 16),
  latencyMs: option('latency', 50),
  /** Connections of phase 6's B-domain load, beside the A-domain load's `connections`. */
  mixedConnections: option('mixed-connections', 8),
  save: !process.argv.includes('--no-save'),
};

const world = new BenchWorld();
const suffix = process.pid.toString(36);
const domainA = world.domain;
const domainB = `acme-bench-eu-${suffix}.test`;
const databaseB = `herald_bench_b_${suffix}`;
const directUrlB = (() => {
  const url = new URL(world.config.DATABASE_URL);
  url.pathname = `/${databaseB}`;
  return url.href;
})();

let regions: Regions | null = null;

// ---------------------------------------------------------------------------------------------
// Load

interface PhaseSpec {
  name: string;
  path: '/emails' | '/emails/batch';
  domain: string;
  /** A unique Idempotency-Key on every request. */
  keyed?: boolean;
  /** Connections, when not the option's for its path. */
  connections?: number;
  region: typeof A | typeof B;
}

/** Every id a 2xx response returned, by its domain's region (warm-ups included). */
const accepted: Record<string, string[]> = { [A]: [], [B]: [] };

/** bench-load's `load` for `seconds`, collecting the accepted ids by region, with a fresh Idempotency-Key per request when keyed. */
function load(api: ServerProcess, token: string, spec: PhaseSpec, seconds: number): Promise<LoadFigures> {
  const batch = spec.path === '/emails/batch';
  const ids = accepted[spec.region];
  return loadFor({
    name: spec.name,
    url: api.url,
    serverPid: api.pid,
    path: spec.path,
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify(batch ? Array.from({ length: BATCH_SIZE }, (_, i) => sampleEmail(spec.domain, i)) : sampleEmail(spec.domain, 1)),
    connections: spec.connections ?? (batch ? options.batchConnections : options.connections),
    seconds,
    emailsPerRequest: batch ? BATCH_SIZE : 1,
    onAccepted: (body) => {
      if (batch) for (const { id } of (JSON.parse(body) as { data: { id: string }[] }).data) ids.push(id);
      else ids.push((JSON.parse(body) as { id: string }).id);
    },
    ...(spec.keyed && { perRequestHeaders: () => ({ 'idempotency-key': randomUUID() }) }),
  });
}

/** A warm-up (not reported, but its emails are checked too), then the measured run. */
async function phase(api: ServerProcess, token: string, spec: PhaseSpec, delayMs: number): Promise<Phase> {
  process.stderr.write(`bench: ${spec.name}: ${options.warmup} s warm-up, ${options.seconds} s measured\n`);
  await load(api, token, spec, options.warmup);
  return { name: spec.name, delayMs, figures: await load(api, token, spec, options.seconds) };
}

/**
 * Two loads at once (A's domain and B's), each with its warm-up: whether B's slow requests hold
 * A's back. Their CPU is not split between them, so neither row has a CPU figure.
 */
async function mixedPhase(api: ServerProcess, token: string, specs: [PhaseSpec, PhaseSpec], delayMs: number): Promise<Phase[]> {
  process.stderr.write(`bench: ${specs.map((s) => s.name).join(' + ')}: ${options.warmup} s warm-up, ${options.seconds} s measured\n`);
  await Promise.all(specs.map((spec) => load(api, token, spec, options.warmup)));
  const measured = await Promise.all(specs.map((spec) => load(api, token, spec, options.seconds)));
  return measured.map((figures, i) => ({ name: specs[i].name, delayMs, figures: { ...figures, cpu: null } }));
}

// ---------------------------------------------------------------------------------------------
// Setup and checks

const planeUrl = (region: string) => (region === A ? world.config.DATABASE_URL : directUrlB);

/**
 * Messages on a region's send stream (the email id is the Nats-Msg-Id: one per email at most):
 * B's asked through A's node while B is up; A's from A's node's monitoring port, which answers
 * with B down too (one node per region: B's loss leaves JetStream's meta group without a quorum,
 * and its API answers "temporarily unavailable", while A's stream keeps taking publishes).
 */
async function countPublished(region: string): Promise<number> {
  const stream = sendStreamName(world.config.NATS_NAMESPACE, region);
  if (region === A) {
    const jsz = (await (await fetch(`${regions!.at.monitorA}/jsz?accounts=true&streams=true`)).json()) as {
      account_details?: { stream_detail?: { name: string; state: { messages: number } }[] }[];
    };
    const found = jsz.account_details?.flatMap((a) => a.stream_detail ?? []).find((s) => s.name === stream);
    if (!found) throw new Error(`${stream} is not on A's node`);
    return found.state.messages;
  }
  const nc = await connect({ servers: regions!.at.natsA });
  try {
    return (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
}

/** Waits (up to 15 s) until a region's stream holds as many messages as its emails table has rows. */
async function published(region: string, rows: number): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const messages = await countPublished(region);
    if (messages >= rows || Date.now() > deadline) return messages;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** What became of a region's accepted emails: in its database, and on its stream. */
async function durabilityOf(region: string, rows: number, messages: number): Promise<Durability> {
  return {
    accepted: accepted[region].length,
    distinct: new Set(accepted[region]).size,
    committed: await world.countCommitted(accepted[region], planeUrl(region)),
    rows,
    stream: sendStreamName(world.config.NATS_NAMESPACE, region),
    messages,
  };
}

/** The API's stop, bounded: B's database link is reset first (a silent link would hold its pool's goodbyes). */
function boundedStop(api: ServerProcess): ServerProcess {
  return {
    ...api,
    async stop() {
      await regions?.command('b-refuse').catch(() => undefined);
      const timer = setTimeout(() => {
        process.stderr.write('bench: the API did not stop within 30 s: SIGKILL\n');
        try {
          process.kill(api.pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }, 30_000);
      await api.stop();
      clearTimeout(timer);
    },
  };
}

/** B's API: HERALD_REGION B, B's database (direct) and NATS node, A's control database (its email plane too) and Redis through the delay. */
function envOfB(r: Regions): NodeJS.ProcessEnv {
  const far = (url: string, port: number) => {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(port);
    return parsed.href;
  };
  const controlFromB = far(world.config.DATABASE_URL, r.at.controlProxyPort);
  return {
    ...world.env,
    HERALD_REGION: B,
    NATS_URL: r.at.natsB.join(','),
    DATABASE_URL: directUrlB,
    CONTROL_DATABASE_URL: controlFromB,
    REGION_DATABASE_URLS: `${A}=${controlFromB}`,
    REDIS_URL: far(world.config.REDIS_URL, r.at.redisProxyPort),
    REDIS_REGION: A,
  };
}

async function describeMachine(): Promise<Record<string, unknown>> {
  const nc = await connect({ servers: regions!.at.natsA });
  try {
    return await withPg(world.config.DATABASE_URL, async (pg) => ({
      cpu: cpus()[0]?.model ?? 'unknown',
      cpus: cpus().length,
      node: process.version,
      postgres: (await pg.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version,
      synchronousCommit: (await pg.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit,
      nats: nc.info?.version ?? 'unknown',
    }));
  } finally {
    await nc.close();
  }
}

// ---------------------------------------------------------------------------------------------

async function run(servers: ServerProcess[]): Promise<void> {
  const background = await backgroundLoad();
  await world.start();
  await withPg(world.config.DATABASE_URL, async (pg) => {
    await pg.query(`DROP DATABASE IF EXISTS ${databaseB} WITH (FORCE)`);
    await pg.query(`CREATE DATABASE ${databaseB}`);
  });
  regions = await Regions.start(Number(new URL(directUrlB).port || 5432), Number(new URL(world.config.REDIS_URL).port || 6379));
  const proxiedUrlB = new URL(directUrlB);
  proxiedUrlB.hostname = '127.0.0.1';
  proxiedUrlB.port = String(regions.at.proxyPort);
  Object.assign(world.env, {
    HERALD_REGIONS: `${A},${B}`,
    HERALD_REGION: A,
    NATS_URL: regions.at.natsA.join(','),
    NATS_PLACE_BY_REGION: 'true',
    REGION_DATABASE_URLS: `${B}=${proxiedUrlB.href}`,
  });
  const machine = await describeMachine();

  await heraldCli(world.env, 'migrate');
  const team = await heraldCli<{ id: string }>(
    world.env,
    'team',
    'create',
    '--name',
    'Bench',
    '--region',
    A,
    '--plan',
    'scale-2.5m',
    '--rate-limit',
    '1000000',
  );
  const { token } = await heraldCli<{ token: string }>(world.env, 'key', 'create', '--team', team.id, '--name', 'Bench key');
  const api = boundedStop(await startHeraldApi(world.env, 1));
  servers.push(api);
  await world.verifyDomain(api.url, token, domainA, A);
  await world.verifyDomain(api.url, token, domainB, B);

  const single = (name: string, region: typeof A | typeof B, keyed = false): PhaseSpec => ({
    name,
    path: '/emails',
    domain: region === A ? domainA : domainB,
    region,
    keyed,
  });
  const batch = (name: string): PhaseSpec => ({ name, path: '/emails/batch', domain: domainA, region: A });
  const delay = options.latencyMs;

  const phases: Phase[] = [];
  await regions.command('latency', 0);
  // The API's first seconds (JIT, pools, caches) would count against phase 1 alone: an unreported warm-up first.
  process.stderr.write(`bench: the API's warm-up: ${options.apiWarmup} s\n`);
  await load(api, token, single('API warm-up', A), options.apiWarmup);
  phases.push(await phase(api, token, single('1. POST /emails, A domain, no key', A), 0));
  await regions.command('latency', delay);
  phases.push(await phase(api, token, single('2. POST /emails, A domain, no key', A), delay));
  phases.push(await phase(api, token, single('3. POST /emails, A domain, Idempotency-Key', A, true), delay));
  phases.push(await phase(api, token, single('4. POST /emails, B domain, no key', B), delay));
  // B's own API: its email plane and NATS near, the control plane and Redis in A.
  const apiB = await startHeraldApi(envOfB(regions), 1);
  servers.push(apiB);
  const atB = [
    await phase(apiB, token, single("7. POST /emails at B's API, B domain, no key", B), delay),
    await phase(apiB, token, single("7k. POST /emails at B's API, B domain, Idempotency-Key", B, true), delay),
  ];
  await apiB.stop();
  const mixed = await mixedPhase(
    api,
    token,
    [
      single('6. POST /emails, A domain, while 6B runs', A),
      { ...single('6B. POST /emails, B domain, with 6', B), connections: options.mixedConnections },
    ],
    delay,
  );
  // B's emails are counted on its stream while B is up.
  const rowsB = await world.settle(planeUrl(B));
  const messagesB = await published(B, rowsB);
  // Up, down, down, up: with the table growing and the machine's hour changing, each condition at the same mean place.
  phases.push(await phase(api, token, batch(`5a. POST /emails/batch ×${BATCH_SIZE}, A, B up`), delay));
  await regions.command('b-down');
  phases.push(await phase(api, token, batch(`5b. POST /emails/batch ×${BATCH_SIZE}, A, B down`), delay));
  const downAgain = await phase(api, token, batch(`5b'. POST /emails/batch ×${BATCH_SIZE}, A, B down`), delay);
  await regions.command('b-up');
  const upAgain = await phase(api, token, batch(`5a'. POST /emails/batch ×${BATCH_SIZE}, A, B up again`), delay);
  phases.push(...mixed, ...atB, downAgain, upAgain);

  const rowsA = await world.settle(planeUrl(A));
  await api.stop();
  const messagesA = await published(A, rowsA);
  const durability = {
    [A]: await durabilityOf(A, rowsA, messagesA),
    [B]: await durabilityOf(B, rowsB, messagesB),
  };
  const date = new Date().toISOString();
  const { targets, ok } = printRegionsReport({ date, regions: { a: A, b: B }, machine, background, delayMs: delay, databaseB, phases, durability });
  if (!ok) process.exitCode = 1;
  if (options.save) {
    const file = saveResults('regions-bench', date, {
      date,
      machine: { ...machine, backgroundLoad: background },
      delayMs: delay,
      phases,
      targets,
      durability,
    });
    process.stderr.write(`bench: results written to ${file}\n`);
  }
}

benchMain(
  'regions-bench',
  {
    async cleanup() {
      await regions?.stop();
      await withPg(world.config.DATABASE_URL, (pg) => pg.query(`DROP DATABASE IF EXISTS ${databaseB} WITH (FORCE)`)).catch((error: unknown) =>
        process.stderr.write(`regions-bench: dropping ${databaseB}: ${String(error)}\n`),
      );
      await world.cleanup();
    },
  },
  run,
);
