// The send API benchmark of issue "Foundation" (`npm run bench:api`; README.md beside it). It
// measures on this machine
//   1. POST /emails, one small realistic email per request, 32 connections;
//   2. POST /emails/batch, 100 emails per request;
//   3. a bare Fastify JSON POST route under the load of 1, for the ratio Herald ÷ bare;
//   4. durability: every email answered 2xx is committed in Postgres and on the send stream;
// and where the CPU went. It isolates itself (own schema, Redis prefix, NATS namespace), runs
// `herald api` as a child process, and removes what it made when it ends. Exit code 1 when an
// accepted email is missing or a request failed; a missed target only prints MISSED.
// Options: --workers N (API processes under node:cluster; default 1, the fastest on 2 vCPU),
// --duration S (12), --warmup S (3), --connections N (32), --batch-connections N (16),
// --only single|batch (that phase alone, printed as JSON), --profile (CPU profiles of the API
// into test/bench/results/profiles), --no-save (no JSON file in test/bench/results).
import { API_POD_LIMIT_MIB, residentMemory } from './process-memory';
import './aliases';
import { join } from 'node:path';
import { DIST } from './aliases';
import { load, LoadFigures, LoadSpec, sampleEmail } from './bench-load';
import { benchMain, heraldCli, ServerProcess, startBareFastify, startHeraldApi } from './bench-processes';
import { BenchReport, Durability, printReport, saveReport, TARGETS } from './bench-report';
import { BenchWorld } from './bench-world';
import { backgroundLoad } from './cpu-meter';
import { option } from './bench-options';

const BATCH_SIZE = 100;

const options = {
  workers: option('workers', 1),
  seconds: option('duration', 12),
  warmup: option('warmup', 3),
  connections: option('connections', 32),
  batchConnections: option('batch-connections', 16),
  only: process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null,
  profile: process.argv.includes('--profile'),
  save: !process.argv.includes('--no-save'),
};
const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(DIST, '..', 'test', 'bench', 'results', 'profiles')}`] : [];

const world = new BenchWorld();

/** Every id a 2xx response returned, in every phase (warm-ups included). */
const acceptedIds: string[] = [];
const collectOne = (body: string) => void acceptedIds.push((JSON.parse(body) as { id: string }).id);
const collectBatch = (body: string) => {
  for (const { id } of (JSON.parse(body) as { data: { id: string }[] }).data) acceptedIds.push(id);
};

/** A warm-up (not reported, but its emails are checked too), then the measured run. */
async function phase(spec: LoadSpec): Promise<{ warm: LoadFigures; measured: LoadFigures }> {
  process.stderr.write(`bench: ${spec.name}: ${options.warmup} s warm-up, ${spec.seconds} s measured\n`);
  const warm = await load({ ...spec, seconds: options.warmup });
  return { warm, measured: await load(spec) };
}

function sendPhase(api: ServerProcess, token: string, kind: 'single' | 'batch'): Promise<{ warm: LoadFigures; measured: LoadFigures }> {
  const single = kind === 'single';
  return phase({
    name: single ? 'POST /emails' : `POST /emails/batch ×${BATCH_SIZE}`,
    url: api.url,
    serverPid: api.pid,
    path: single ? '/emails' : '/emails/batch',
    body: JSON.stringify(single ? sampleEmail(world.domain, 1) : Array.from({ length: BATCH_SIZE }, (_, i) => sampleEmail(world.domain, i))),
    headers: { authorization: `Bearer ${token}` },
    connections: single ? options.connections : options.batchConnections,
    seconds: options.seconds,
    emailsPerRequest: single ? 1 : BATCH_SIZE,
    onAccepted: single ? collectOne : collectBatch,
  });
}

async function durability(phases: LoadFigures[]): Promise<Durability> {
  return {
    acceptedEmails: acceptedIds.length,
    distinctAcceptedIds: new Set(acceptedIds).size,
    acceptedIdsInPostgres: await world.countCommitted(acceptedIds),
    rowsInPostgres: await world.countEmails(),
    schema: world.config.DATABASE_SCHEMA,
    stream: world.stream,
    messagesOnStream: await world.countPublished(),
    non2xx: phases.reduce((sum, f) => sum + Object.values(f.non2xx).reduce((a, b) => a + b, 0), 0),
    errors: phases.reduce((sum, f) => sum + f.errors + f.timeouts, 0),
  };
}

async function run(servers: ServerProcess[]): Promise<void> {
  const background = await backgroundLoad();
  await world.start();
  await heraldCli(world.env, 'migrate');
  const team = await heraldCli<{ id: string }>(world.env, 'team', 'create', '--name', 'Bench', '--plan', 'scale-2.5m', '--rate-limit', '1000000');
  const { token } = await heraldCli<{ token: string }>(world.env, 'key', 'create', '--team', team.id, '--name', 'Bench key');

  let bare: LoadFigures | null = null;
  if (!options.only) {
    const server = await startBareFastify(options.workers);
    servers.push(server);
    const { measured } = await phase({
      name: 'bare Fastify POST',
      url: server.url,
      serverPid: server.pid,
      path: '/emails',
      body: JSON.stringify(sampleEmail(world.domain, 1)),
      connections: options.connections,
      seconds: options.seconds,
      emailsPerRequest: 0,
    });
    bare = measured;
    await server.stop();
  }

  const api = await startHeraldApi(world.env, options.workers, nodeArgs);
  servers.push(api);
  await world.verifyDomain(api.url, token);
  const single = options.only !== 'batch' ? await sendPhase(api, token, 'single') : null;
  const batch = options.only !== 'single' ? await sendPhase(api, token, 'batch') : null;
  await world.settle();
  // Read before the stop: VmHWM is the peak over the whole run (warm-ups and both phases).
  const memory = residentMemory(api.pid);
  await api.stop();
  if (memory) {
    const within = memory.peakMiB < API_POD_LIMIT_MIB ? 'within' : 'OVER';
    process.stderr.write(
      `bench: API resident memory: peak ${memory.peakMiB} MiB (VmHWM), ${memory.nowMiB} MiB at the end; ${within} the pod's ${API_POD_LIMIT_MIB} Mi\n`,
    );
  }

  const phases = [single, batch].flatMap((p) => (p ? [p.warm, p.measured] : []));
  const checked = await durability(phases);
  if (checked.acceptedIdsInPostgres !== checked.acceptedEmails || checked.messagesOnStream < checked.acceptedEmails || checked.non2xx > 0) {
    process.exitCode = 1;
  }
  if (!bare || !single || !batch) {
    process.stdout.write(`${JSON.stringify({ measured: (single ?? batch)!.measured, durability: checked, memory }, null, 2)}\n`);
    return;
  }
  const report: BenchReport = {
    date: new Date().toISOString(),
    machine: { ...(await world.describeMachine()), backgroundLoad: background },
    api: {
      workers: options.workers,
      command:
        options.workers === 1
          ? 'node bin/herald.js api (1 process)'
          : `${options.workers} × node bin/herald.js api under node:cluster (test/bench/api-cluster.ts)`,
    },
    bare,
    single: single.measured,
    batch: { ...batch.measured, batchSize: BATCH_SIZE },
    ratio: single.measured.requestsPerSecond / bare.requestsPerSecond,
    durability: checked,
    memory: memory && { ...memory, podLimitMiB: API_POD_LIMIT_MIB },
    targets: {
      ...TARGETS,
      singleMet: single.measured.emailsPerSecond >= TARGETS.singleEmailsPerSecond && single.measured.latencyMs.p99 < TARGETS.singleP99Ms,
      batchMet: batch.measured.emailsPerSecond >= TARGETS.batchEmailsPerSecond,
    },
  };
  printReport(report);
  if (options.save) process.stdout.write(`  results: ${saveReport(report)}\n`);
}

benchMain('api-bench', world, run);
