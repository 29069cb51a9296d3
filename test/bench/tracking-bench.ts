// The tracking benchmark of issue 14 (`npm run bench:tracking`; README.md beside it). It measures
// on this machine, at 32 connections, in one run:
//   1. a bare Fastify GET route answering a 302 (the floor);
//   2. Herald's click redirect, GET /t/c/<token> on `herald api`'s tracking listener
//      (TRACKING_LISTEN_PORT, where an ingress sends the tracking host names): the token verified, the click
//      handed to the region's tracking stream (JetStream, the ack awaited) and answered with a 302
//      to the signed link; the api's own consumer of that stream records the clicks
//      (email.clicked events, in large transactions) meanwhile and after;
// The two are measured in alternating slices (--rounds, 3: bare, Herald, bare, Herald, …, each
// slice a round's share of --duration), so the ratio compares them under the same machine: on a
// shared host the bare floor alone swings 23k–45k/s from one minute to the next. It prints
// redirects/s (all slices), p50/p99/max (the worst slice's), each round's ratio, and the ratio
// against the target (≥ 0.3× bare, p99 < 20 ms).
// The tokens are real: 1,000 emails are accepted through POST /emails/batch first (no worker
// runs, they stay queued) and one click token per email is signed with the API's TRACKING_KEYS.
// Afterwards every redirect answered must be an email.clicked event in Postgres (exit code 1
// otherwise), and it prints how long after the load the last one was recorded; a missed target
// only prints MISSED.
// Options: --duration S (12), --rounds N (3), --warmup S (3), --connections N (32), --emails N (1000), --api-port (the
// same redirects on API_PORT too, behind the REST API's request hooks, printed below), --profile (a
// V8 CPU profile of the API into test/bench/results/profiles/tracking-<date>), --no-save.
import './aliases';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { TrackingKeys } from '@herald/tracking';
import { DIST } from './aliases';
import { load, LoadFigures, LoadSpec, sampleEmail } from './bench-load';
import { benchMain, freePort, heraldCli, ServerProcess, startBareFastify, startHeraldApi } from './bench-processes';
import { cpuLine, saveResults } from './bench-report';
import { BenchWorld } from './bench-world';
import { backgroundLoad, type CpuSplit, meterCpu } from './cpu-meter';
import { option } from './bench-options';

const TARGET = { ratio: 0.3, p99Ms: 20 };
const READER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

const options = {
  seconds: option('duration', 12),
  rounds: Math.max(1, option('rounds', 3)),
  warmup: option('warmup', 3),
  connections: option('connections', 32),
  emails: option('emails', 1000),
  profile: process.argv.includes('--profile'),
  apiPort: process.argv.includes('--api-port'),
  save: !process.argv.includes('--no-save'),
};
const profileDir = join(DIST, '..', 'test', 'bench', 'results', 'profiles', `tracking-${new Date().toISOString().replace(/[:.]/g, '-')}`);
const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];

const world = new BenchWorld();
const trackingKey = randomBytes(32);
world.env.TRACKING_KEYS = trackingKey.toString('base64');

async function warmUp(spec: LoadSpec): Promise<LoadFigures> {
  process.stderr.write(`bench: ${spec.name}: ${options.warmup} s warm-up\n`);
  return load({ ...spec, seconds: options.warmup });
}

/**
 * The phases measured in alternating slices, `rounds` of each, a round's share of the duration
 * per slice: what one phase's slices answered, over their time; latency from the worst slice;
 * CPU summed.
 */
async function interleaved(
  specs: LoadSpec[],
  settle: (answered: number) => Promise<void>,
  warm: LoadFigures[],
): Promise<{ merged: LoadFigures[]; slices: LoadFigures[][] }> {
  const seconds = Math.max(1, Math.round(options.seconds / options.rounds));
  const slices: LoadFigures[][] = specs.map(() => []);
  for (let round = 1; round <= options.rounds; round++) {
    // The recorder catches up on Herald's slices (and warm-up) before the next bare slice, whose rate it would lower.
    const heralds = [...warm.slice(1), ...slices.slice(1).flat()];
    await settle(heralds.reduce((n, f) => n + f.responses2xx, 0));
    for (const [i, spec] of specs.entries()) {
      process.stderr.write(`bench: round ${round}/${options.rounds}: ${spec.name}, ${seconds} s\n`);
      slices[i].push(await load({ ...spec, seconds }));
    }
  }
  return { merged: slices.map(merge), slices };
}

function sumCpu(splits: (CpuSplit | null)[]): CpuSplit | null {
  if (!splits.length || splits.some((c) => c === null)) return null;
  const all = splits as CpuSplit[];
  return Object.fromEntries(Object.keys(all[0]).map((k) => [k, all.reduce((t, c) => t + c[k as keyof CpuSplit], 0)])) as unknown as CpuSplit;
}

function merge(slices: LoadFigures[]): LoadFigures {
  const sum = (pick: (f: LoadFigures) => number) => slices.reduce((total, f) => total + pick(f), 0);
  const worst = (pick: (f: LoadFigures) => number) => Math.max(...slices.map(pick));
  const seconds = sum((f) => f.seconds);
  const non2xx: Record<string, number> = {};
  for (const f of slices) for (const [status, n] of Object.entries(f.non2xx)) non2xx[status] = (non2xx[status] ?? 0) + n;
  const cpu = sumCpu(slices.map((f) => f.cpu));
  return {
    ...slices[0],
    seconds,
    requestsPerSecond: sum((f) => f.responses2xx) / seconds,
    emailsPerSecond: sum((f) => f.emailsPerSecond * f.seconds) / seconds,
    latencyMs: {
      p50: worst((f) => f.latencyMs.p50),
      p90: worst((f) => f.latencyMs.p90),
      p99: worst((f) => f.latencyMs.p99),
      max: worst((f) => f.latencyMs.max),
    },
    responses2xx: sum((f) => f.responses2xx),
    non2xx,
    errors: sum((f) => f.errors),
    timeouts: sum((f) => f.timeouts),
    cpu,
  };
}

/** Accepts `count` emails on the bench's domain and answers a signed click token for each (recipient 0, link 0). */
async function clickTokens(api: ServerProcess, token: string, count: number): Promise<string[]> {
  const keys = TrackingKeys.of([trackingKey]);
  const signedAt = new Date(Date.now() - 3_600_000);
  const tokens: string[] = [];
  for (let n = 0; n < count; n += 100) {
    const batch = Array.from({ length: Math.min(100, count - n) }, (_, i) => sampleEmail(world.domain, n + i));
    const response = await fetch(`${api.url}/emails/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(batch),
    });
    const body = (await response.json()) as { data?: { id: string }[] };
    if (!response.ok || !body.data) throw new Error(`POST /emails/batch answered ${response.status}: ${JSON.stringify(body)}`);
    for (const { id } of body.data) {
      tokens.push(
        keys.sign({ kind: 'click', emailId: id, position: 0, signedAt, link: 0, url: `https://shop.example/orders/${id}?utm_source=email` }),
      );
    }
  }
  return tokens;
}

async function clicksRecorded(): Promise<number> {
  const pg = new Client({ connectionString: world.config.DATABASE_URL });
  await pg.connect();
  try {
    const sql = `SELECT count(*)::int AS n FROM "${world.config.DATABASE_SCHEMA}".email_events WHERE type = 'email.clicked'`;
    return (await pg.query<{ n: number }>(sql)).rows[0]!.n;
  } finally {
    await pg.end();
  }
}

const row = (f: LoadFigures) =>
  `  ${f.name.padEnd(32)}${Math.round(f.requestsPerSecond).toLocaleString('en-US').padStart(10)}${String(f.latencyMs.p50).padStart(8)}${String(f.latencyMs.p99).padStart(8)}${String(f.latencyMs.max).padStart(8)}  ${
    Object.keys(f.non2xx).length || f.errors || f.timeouts ? JSON.stringify({ ...f.non2xx, errors: f.errors, timeouts: f.timeouts }) : 'none'
  }`;
/**
 * The recording a load leaves behind is not in its CPU line: what Herald spent from the warm-up's
 * start until the last click was recorded, per redirect answered (so a recorder that defers work
 * past the load shows it here).
 */
function allIn(warm: CpuSplit | null, measured: CpuSplit | null, catchUp: CpuSplit | null, answered: number): string {
  if (!warm || !measured || !catchUp) return '  all in: CPU figures need Linux /proc';
  const us = (pick: (c: CpuSplit) => number) => Math.round(((pick(warm) + pick(measured) + pick(catchUp)) * 1e6) / answered);
  const [server, postgres, nats] = [us((c) => c.server), us((c) => c.postgres), us((c) => c.nats)];
  return (
    `  all in (warm-up, load and catch-up, per redirect answered): server ${server}, postgres ${postgres}, nats ${nats} = ${server + postgres + nats} µs; ` +
    `catching up (between slices and after the load): server ${catchUp.server.toFixed(2)} s, postgres ${catchUp.postgres.toFixed(2)} s, nats ${catchUp.nats.toFixed(2)} s of CPU`
  );
}

async function run(servers: ServerProcess[]): Promise<void> {
  const background = await backgroundLoad();
  await world.start();
  await heraldCli(world.env, 'migrate');
  const team = await heraldCli<{ id: string }>(world.env, 'team', 'create', '--name', 'Bench', '--plan', 'scale-2.5m', '--rate-limit', '1000000');
  const { token } = await heraldCli<{ token: string }>(world.env, 'key', 'create', '--team', team.id, '--name', 'Bench key');

  const bareServer = await startBareFastify(1);
  servers.push(bareServer);
  const common = { method: 'GET' as const, success: 3 as const, connections: options.connections, seconds: options.seconds, emailsPerRequest: 0 };
  const bareSpec: LoadSpec = { ...common, name: 'bare Fastify GET 302', url: bareServer.url, serverPid: bareServer.pid, path: '/t/c/abc' };

  // The tracking host's own listener, as deployed (an ingress sends the tracking host names to it).
  const trackingPort = await freePort();
  const api = await startHeraldApi({ ...world.env, TRACKING_LISTEN_PORT: String(trackingPort) }, 1, nodeArgs);
  servers.push(api);
  await world.verifyDomain(api.url, token);
  const tokens = await clickTokens(api, token, options.emails);
  const redirects = {
    ...common,
    serverPid: api.pid,
    path: `/t/c/${tokens[0]}`,
    paths: tokens.map((t) => `/t/c/${t}`),
    headers: { 'user-agent': READER_AGENT },
  };
  const heraldSpec: LoadSpec = { ...redirects, name: 'GET /t/c/<token> 302', url: `http://127.0.0.1:${trackingPort}` };
  // The same routes on API_PORT, behind the REST API's request hooks (printed for comparison; the target is the tracking port's).
  const apiPortSpec: LoadSpec | null = options.apiPort ? { ...redirects, name: '  the same on API_PORT', url: api.url } : null;
  const specs = [bareSpec, heraldSpec, ...(apiPortSpec ? [apiPortSpec] : [])];
  const warm = [];
  for (const spec of specs) warm.push(await warmUp(spec));
  // What Herald spends catching up between slices, for the all-in figure.
  const settled: (CpuSplit | null)[] = [];
  const caughtUp = async (answered: number) => {
    const cpu = meterCpu(api.pid);
    for (let seen = await clicksRecorded(), idleSince = Date.now(); seen < answered && Date.now() - idleSince < 5_000;) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await clicksRecorded();
      if (now !== seen) [seen, idleSince] = [now, Date.now()];
    }
    settled.push(cpu());
  };
  const { merged, slices } = await interleaved(specs, caughtUp, warm);
  await bareServer.stop();
  const bare = { warm: warm[0], measured: merged[0] };
  const herald = { warm: warm[1], measured: merged[1] };
  const onApiPort = apiPortSpec ? { warm: warm[2], measured: merged[2] } : null;
  const roundRatios = slices[1].map((f, i) => f.requestsPerSecond / slices[0][i].requestsPerSecond);
  // Every answered redirect was on the tracking stream; the consumer may still be behind. Wait
  // until it has recorded them all, or recorded nothing more for 5 s, metering what that costs.
  const loadEnded = Date.now();
  const catchUpCpu = meterCpu(api.pid);
  const answered = [herald, onApiPort].reduce((sum, p) => sum + (p ? p.warm.responses2xx + p.measured.responses2xx : 0), 0);
  let recorded = await clicksRecorded();
  let recordedAt = loadEnded;
  for (let idleSince = Date.now(); recorded < answered && Date.now() - idleSince < 5_000;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await clicksRecorded();
    if (now !== recorded) [recorded, recordedAt, idleSince] = [now, Date.now(), Date.now()];
  }
  const drainSeconds = (recordedAt - loadEnded) / 1000;
  const catchUp = sumCpu([catchUpCpu(), ...settled]);
  await api.stop();

  const ratio = herald.measured.requestsPerSecond / bare.measured.requestsPerSecond;
  const met = ratio >= TARGET.ratio && herald.measured.latencyMs.p99 < TARGET.p99Ms;
  const lines = [
    '',
    `  tracking redirects at ${options.connections} connections, ${options.seconds} s measured in ${options.rounds} alternating rounds after ${options.warmup} s warm-up each; machine busy before the bench: ${background === null ? '?' : `${Math.round(background * 100)}%`}`,
    '',
    `  ${''.padEnd(32)}${'req/s'.padStart(10)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}  other statuses / errors`,
    row(bare.measured),
    row(herald.measured),
    ...(onApiPort ? [row(onApiPort.measured)] : []),
    '',
    `  Herald redirects/s ÷ bare Fastify = ${ratio.toFixed(3)} (by round: ${roundRatios.map((r) => r.toFixed(3)).join(', ')}; bare by round: ${slices[0].map((f) => Math.round(f.requestsPerSecond).toLocaleString('en-US')).join(', ')} req/s)`,
    `  target ≥ ${TARGET.ratio}× bare, p99 < ${TARGET.p99Ms} ms: ${ratio.toFixed(2)}×, p99 ${herald.measured.latencyMs.p99} ms  ${met ? 'MET' : 'MISSED'}`,
    '',
    '  CPU µs per redirect, by process ("other": work that is not the bench\'s); capacity = redirects/s per server vCPU:',
    `  ${''.padEnd(26)}${'server'.padStart(7)}${'loadgen'.padStart(8)}${'postgres'.padStart(9)}${'redis'.padStart(6)}${'nats'.padStart(6)}${'other'.padStart(6)}${'idle'.padStart(6)}${'capacity'.padStart(10)}`,
    cpuLine(bare.measured),
    cpuLine(herald.measured),
    ...(onApiPort ? [cpuLine(onApiPort.measured)] : []),
    '',
    `  recorded: ${answered.toLocaleString('en-US')} redirects answered (warm-up included), ${recorded.toLocaleString('en-US')} email.clicked events in Postgres, the last ${drainSeconds.toFixed(1)} s after the load ended`,
    allIn(herald.warm.cpu, herald.measured.cpu, catchUp, answered),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  if (recorded < answered || Object.keys(herald.measured.non2xx).length || herald.measured.errors) process.exitCode = 1;
  if (options.save) {
    const date = new Date().toISOString();
    const path = saveResults('tracking-bench', date, {
      date,
      background,
      bare: bare.measured,
      herald: herald.measured,
      heraldOnApiPort: onApiPort?.measured ?? null,
      ratio,
      rounds: slices.map((phase) => phase.map((f) => ({ requestsPerSecond: f.requestsPerSecond, p99: f.latencyMs.p99 }))),
      roundRatios,
      target: TARGET,
      met,
      answered,
      recorded,
      drainSeconds,
      catchUpCpu: catchUp,
    });
    process.stdout.write(`  results: ${path}\n`);
  }
}

benchMain('tracking-bench', world, run);
