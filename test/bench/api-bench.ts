// The send API benchmark of issue "Foundation" (`npm run bench:api`). On this machine it measures
//   1. POST /emails, one small realistic email per request, 32 connections;
//   2. POST /emails/batch, 100 emails per request;
//   3. a bare Fastify JSON POST route under the same load, for the ratio Herald ÷ bare;
//   4. durability: every email answered 2xx is committed in Postgres and on the send stream.
// It isolates itself (own schema, Redis prefix, NATS namespace), starts `herald api` as a child
// process, and removes everything it made when it ends. Options: --workers N (API processes
// under node:cluster, default 1), --duration S (12), --warmup S (3), --connections N (32),
// --batch-connections N (8), --profile (CPU profiles of the API into test/bench/results/),
// --no-save (do not write the JSON results file).
import './aliases';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { loadConfig } from '@herald/config';
import { sendStreamName } from '@herald/bus';
import { deleteNamespaceStreams, purgeRedisPrefix } from '@herald/testing';
import { DIST } from './aliases';
import { load, LoadFigures, sampleEmail } from './bench-load';
import { heraldCli, ServerProcess, startBareFastify, startHeraldApi } from './bench-processes';
import { BenchReport, Durability, printReport, saveReport, TARGETS } from './bench-report';

const BATCH_SIZE = 100;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const options = {
  workers: option('workers', 1),
  seconds: option('duration', 12),
  warmup: option('warmup', 3),
  connections: option('connections', 32),
  batchConnections: option('batch-connections', 8),
  profile: process.argv.includes('--profile'),
  save: !process.argv.includes('--no-save'),
};

const suffix = process.pid.toString(36);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  HERALD_REGION: 'us-east-1',
  DATABASE_SCHEMA: `bench_${suffix}`,
  REDIS_PREFIX: `bench:${suffix}:`,
  NATS_NAMESPACE: `bench_${suffix}`,
};
const config = loadConfig(env);
const stream = sendStreamName(config.NATS_NAMESPACE, config.HERALD_REGION);

/** Every id a 2xx response returned, across all phases. */
const acceptedIds: string[] = [];
let acceptedEmails = 0;
const collectSingle = (body: string) => {
  acceptedEmails += 1;
  acceptedIds.push((JSON.parse(body) as { id: string }).id);
};
const collectBatch = (body: string) => {
  const { data } = JSON.parse(body) as { data: { id: string }[] };
  acceptedEmails += data.length;
  for (const { id } of data) acceptedIds.push(id);
};

/** A warm-up (counted for durability, not reported), then the measured run. */
async function phase(spec: Parameters<typeof load>[0]): Promise<{ warm: LoadFigures; measured: LoadFigures }> {
  process.stderr.write(`bench: ${spec.name}: ${options.warmup} s warm-up, ${spec.seconds} s measured\n`);
  const warm = await load({ ...spec, seconds: options.warmup });
  const measured = await load(spec);
  return { warm, measured };
}

async function main(): Promise<void> {
  const servers: ServerProcess[] = [];
  try {
    await heraldCli(env, 'migrate');
    const team = await heraldCli<{ id: string }>(env, 'team', 'create', '--name', 'Bench', '--plan', 'scale-2.5m', '--rate-limit', '1000000');
    const { token } = await heraldCli<{ token: string }>(env, 'key', 'create', '--team', team.id, '--name', 'Bench key');
    const single = JSON.stringify(sampleEmail(1));
    const batch = JSON.stringify(Array.from({ length: BATCH_SIZE }, (_, i) => sampleEmail(i)));

    const bareServer = await startBareFastify(options.workers);
    servers.push(bareServer);
    const bare = await phase({ name: 'bare Fastify POST', url: bareServer.url, path: '/emails', body: single, connections: options.connections, seconds: options.seconds, emailsPerRequest: 0 });
    await bareServer.stop();

    const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(DIST, '..', 'test', 'bench', 'results', 'profiles')}`] : [];
    const api = await startHeraldApi(env, options.workers, nodeArgs);
    servers.push(api);
    const headers = { authorization: `Bearer ${token}` };
    const sends = await phase({ name: 'POST /emails', url: api.url, path: '/emails', body: single, headers, connections: options.connections, seconds: options.seconds, emailsPerRequest: 1, onAccepted: collectSingle });
    const batches = await phase({ name: `POST /emails/batch ×${BATCH_SIZE}`, url: api.url, path: '/emails/batch', body: batch, headers, connections: options.batchConnections, seconds: options.seconds, emailsPerRequest: BATCH_SIZE, onAccepted: collectBatch });
    // Requests the load generator cut off are still finishing; a graceful stop waits for them.
    await api.stop();

    const phases = [sends.warm, sends.measured, batches.warm, batches.measured];
    const durability = await checkDurability(phases);
    const report: BenchReport = {
      date: new Date().toISOString(),
      machine: await machine(),
      api: { workers: options.workers, command: options.workers === 1 ? 'node bin/herald.js api (1 process)' : `${options.workers} × node bin/herald.js api under node:cluster (test/bench/api-cluster.ts)` },
      bare: bare.measured,
      single: sends.measured,
      batch: { ...batches.measured, batchSize: BATCH_SIZE },
      ratio: sends.measured.requestsPerSecond / bare.measured.requestsPerSecond,
      durability,
      targets: {
        ...TARGETS,
        singleMet: sends.measured.emailsPerSecond >= TARGETS.singleEmailsPerSecond && sends.measured.latencyMs.p99 < TARGETS.singleP99Ms,
        batchMet: batches.measured.emailsPerSecond >= TARGETS.batchEmailsPerSecond,
      },
    };
    printReport(report);
    if (options.save) process.stdout.write(`  results: ${saveReport(report)}\n`);
    const lost = durability.acceptedIdsInPostgres !== acceptedEmails || durability.messagesOnStream < acceptedEmails;
    if (lost || durability.non2xx > 0) process.exitCode = 1;
  } finally {
    for (const server of servers) await server.stop();
    await cleanup();
  }
}

async function checkDurability(phases: LoadFigures[]): Promise<Durability> {
  const pg = new Client({ connectionString: config.DATABASE_URL });
  await pg.connect();
  let found = 0;
  let rows = 0;
  try {
    const table = `"${config.DATABASE_SCHEMA}".emails`;
    for (let i = 0; i < acceptedIds.length; i += 50_000) {
      const chunk = acceptedIds.slice(i, i + 50_000);
      const result = await pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE id = ANY($1::uuid[])`, [chunk]);
      found += Number(result.rows[0].n);
    }
    rows = Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  } finally {
    await pg.end();
  }
  const nc = await connect({ servers: config.NATS_URL });
  let messages = 0;
  try {
    messages = (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
  return {
    acceptedEmails,
    distinctAcceptedIds: new Set(acceptedIds).size,
    acceptedIdsInPostgres: found,
    rowsInPostgres: rows,
    stream,
    messagesOnStream: messages,
    non2xx: phases.reduce((sum, f) => sum + Object.values(f.non2xx).reduce((a, b) => a + b, 0), 0),
    errors: phases.reduce((sum, f) => sum + f.errors + f.timeouts, 0),
  };
}

async function machine(): Promise<BenchReport['machine']> {
  const pg = new Client({ connectionString: config.DATABASE_URL });
  await pg.connect();
  const nc = await connect({ servers: config.NATS_URL });
  try {
    const setting = async (name: string) => (await pg.query<Record<string, string>>(`SHOW ${name}`)).rows[0][name];
    return {
      cpu: cpus()[0]?.model ?? 'unknown',
      cpus: cpus().length,
      node: process.version,
      postgres: await setting('server_version'),
      synchronousCommit: await setting('synchronous_commit'),
      nats: nc.info?.version ?? 'unknown',
    };
  } finally {
    await pg.end();
    await nc.close();
  }
}

async function cleanup(): Promise<void> {
  const pg = new Client({ connectionString: config.DATABASE_URL });
  await pg.connect();
  try {
    await pg.query(`DROP SCHEMA IF EXISTS "${config.DATABASE_SCHEMA}" CASCADE`);
  } finally {
    await pg.end();
  }
  await purgeRedisPrefix(config);
  await deleteNamespaceStreams(config);
}

main().catch((error: unknown) => {
  process.stderr.write(`api-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
