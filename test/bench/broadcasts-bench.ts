// The broadcasts benchmark of issue 18 (`npm run bench:broadcasts`). On this machine, in one run:
//   1. fan-out: a broadcast to a segment of --contacts contacts (100,000), sent with
//      POST /broadcasts {send: true} to `herald api`, which turns it into one durable email per
//      contact (chunks of BROADCAST_CHUNK_SIZE, each one transaction, then the broadcast's cursor);
//      printed: emails written per second, from the request until the broadcast is `sent`
//      (target ≥ 20,000/s, the batch API's figure);
//   2. delivery: the time from the request until the last email is at the local MX sinks
//      (--workers × `herald worker`, --sinks loopback sinks for 8 recipient domains), and a
//      check that each arrived exactly once;
//   3. one-click unsubscribe: POST /unsubscribe/<token> (RFC 8058 body) at --rate requests/s
//      (200), evenly spaced in an open loop (latency from each request's due time), for --duration s (10), each token a different recipient's; p50/p99/max (target p99
//      < 50 ms), and a check that every contact answered 200 is unsubscribed in Postgres.
// Contacts are seeded with SQL (generate_series), not through the API: the bench measures the
// fan-out, not the import. Each phase prints its CPU per email or request: the API's, its own
// Postgres backends' (not the shared server's other clients) and the NATS server's; on a busy
// machine these compare better than rates. Options: --contacts N, --workers N (1), --sinks N (4),
// --rate N, --duration S, --no-delivery (no worker: the emails stay queued, phase 2 is skipped),
// --profile (V8 CPU profiles of the API and worker(s) into
// test/bench/results/profiles/broadcasts-<date>/{api,worker}; sum them with profile-summary.js),
// --keep (leave the schema, to EXPLAIN the fan-out's queries on it), --no-save. Run briefly with small numbers while developing (--contacts 2000).
import './aliases';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { UnsubscribeKeys } from '@herald/broadcasts';
import { freeSharedPort } from '@herald/testing';
import { DIST } from './aliases';
import { benchMain, heraldCli, ServerProcess, startHeraldApi, startHeraldRole } from './bench-processes';
import { saveResults } from './bench-report';
import { BenchWorld } from './bench-world';
import { backgroundLoad } from './cpu-meter';
import { SinkProcess } from './delivery-sinks';
import { option } from './bench-options';
import { openLoop } from './open-loop';
import { cpuTable, meterBroadcastPhase } from './broadcasts-measure';

const TARGET = { fanOutPerSecond: 20_000, unsubscribeP99Ms: 50 };
const DOMAINS = 8;

const options = {
  contacts: option('contacts', 100_000),
  workers: option('workers', 1),
  sinks: option('sinks', 4),
  rate: option('rate', 200),
  seconds: option('duration', 10),
  delivery: !process.argv.includes('--no-delivery'),
  profile: process.argv.includes('--profile'),
  keep: process.argv.includes('--keep'),
  save: !process.argv.includes('--no-save'),
};
const profiles = join(DIST, '..', 'test', 'bench', 'results', 'profiles', `broadcasts-${new Date().toISOString().replace(/[:.]/g, '-')}`);
const nodeArgs = (role: string) => (options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profiles, role)}`] : []);

const world = new BenchWorld();
const trackingKey = randomBytes(32);
world.env.TRACKING_KEYS = trackingKey.toString('base64');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const recipientDomain = (d: number) => `inbox${d + 1}.bench.test`;

const HTML =
  '<!doctype html><html><body style="font-family:Helvetica,Arial,sans-serif;color:#222;margin:0;padding:24px">' +
  '<h1 style="font-size:20px">June at Acme, {{{contact.first_name|there}}}</h1>' +
  `<p>${'Here is what changed this month, and what comes next for {{{contact.company}}}. '.repeat(8)}</p>` +
  '<p><a href="https://acme.example/news/june">Read the whole story</a></p>' +
  '<p style="font-size:12px;color:#888"><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p></body></html>';

async function run(servers: ServerProcess[]): Promise<void> {
  const background = await backgroundLoad();
  await world.start();
  const hosts = Array.from({ length: options.sinks }, (_, i) => `127.0.0.${i + 2}`);
  const port = await freeSharedPort(hosts);
  hosts.forEach((host, i) => world.publish(`mx${i + 1}.sinks.bench.test`, 'A', [host]));
  for (let d = 0; d < DOMAINS; d++)
    world.publish(recipientDomain(d), 'MX', [{ exchange: `mx${(d % options.sinks) + 1}.sinks.bench.test`, priority: 10 }]);
  const sinks = await SinkProcess.start(hosts, port);
  servers.push({ url: '', pid: sinks.pid, stop: () => sinks.stop() });

  const env: NodeJS.ProcessEnv = {
    ...world.env,
    DELIVERY_PORT: String(port),
    DELIVERY_HOSTNAME: 'mta.us-east-1.herald.test',
    REGION_SPF: 'us-east-1=ip4:127.0.0.0/8',
  };
  await heraldCli(env, 'migrate');
  const team = await heraldCli<{ id: string }>(env, 'team', 'create', '--name', 'Broadcast bench', '--plan', 'scale-2.5m', '--rate-limit', '1000000');
  const { token } = await heraldCli<{ token: string }>(env, 'key', 'create', '--team', team.id, '--name', 'Bench key');
  if (options.profile) process.stderr.write(`bench: CPU profiles go to ${profiles}\n`);
  const api = await startHeraldApi(env, 1, nodeArgs('api'));
  servers.push(api);
  await world.verifyDomain(api.url, token);
  const workers: ServerProcess[] = [];
  for (let i = 0; options.delivery && i < options.workers; i++) workers.push(await startHeraldRole(env, 'worker', nodeArgs('worker')));
  servers.push(...workers);

  const pg = new Client({ connectionString: world.config.DATABASE_URL });
  await pg.connect();
  await pg.query(`SET search_path TO "${world.config.DATABASE_SCHEMA}"`);
  try {
    process.stderr.write(`bench: seeding ${options.contacts.toLocaleString('en-US')} contacts\n`);
    const segmentId = await seed(pg, team.id);

    // 1. Fan-out.
    const fanOutCpu = meterBroadcastPhase(
      pg,
      api.pid,
      workers.map((w) => w.pid),
    );
    const started = Date.now();
    const created = await fetch(`${api.url}/broadcasts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: `Acme <news@${world.domain}>`,
        segment_id: segmentId,
        subject: 'June news for {{{contact.first_name|you}}}',
        html: HTML,
        text: 'June at Acme, {{{contact.first_name|there}}}. Unsubscribe: {{{RESEND_UNSUBSCRIBE_URL}}}',
        send: true,
      }),
    });
    const { id } = (await created.json()) as { id: string };
    if (!created.ok) throw new Error(`POST /broadcasts answered ${created.status}`);
    process.stderr.write(`bench: broadcast ${id} sent; fanning out\n`);
    for (;;) {
      const { rows } = await pg.query<{ status: string }>(`SELECT status FROM broadcasts WHERE id = $1`, [id]);
      if (rows[0]!.status === 'sent') break;
      await sleep(20);
    }
    const fanOutSeconds = (Date.now() - started) / 1000;
    const fanOutSplit = await fanOutCpu();
    const { rows: written } = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM emails WHERE broadcast_id = $1`, [id]);
    const emails = written[0]!.n;
    const fanOutRate = emails / fanOutSeconds;
    process.stderr.write(`bench: ${emails} emails written in ${fanOutSeconds.toFixed(2)} s; waiting for delivery\n`);

    // 2. Delivery to the sinks.
    let received = 0;
    let last = -1;
    let since = Date.now();
    while (options.delivery && received < emails && Date.now() - since < 60_000) {
      received = (await sinks.ask('count')).received;
      if (received !== last) [last, since] = [received, Date.now()];
      await sleep(100);
    }
    const deliveredSeconds = (Date.now() - started) / 1000;
    const take = await sinks.ask('take');
    const unsubscribeCpu = meterBroadcastPhase(
      pg,
      api.pid,
      workers.map((w) => w.pid),
    );

    // 3. One-click unsubscribe at a fixed rate.
    const keys = UnsubscribeKeys.fromConfig({ TRACKING_KEYS: [trackingKey.toString('base64')] });
    const count = Math.min(emails, Math.ceil(options.rate * options.seconds * 1.2));
    const { rows: sample } = await pg.query<{ email_id: string }>(`SELECT email_id FROM broadcast_recipients WHERE broadcast_id = $1 LIMIT $2`, [
      id,
      count,
    ]);
    const paths = sample.map((r) => `/unsubscribe/${keys.token(r.email_id)}`);
    process.stderr.write(`bench: one-click unsubscribe at ${options.rate} req/s for ${options.seconds} s\n`);
    const result = await openLoop(api.url, options.rate, options.seconds, (i) => ({
      method: 'POST',
      path: paths[i % paths.length]!,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    }));
    const ok = result.statuses[200] ?? 0;
    const other = result.requests - ok;
    await sleep(500);
    const unsubscribeSplit = await unsubscribeCpu();
    const { rows: unsubscribed } = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM contacts WHERE team_id = $1 AND unsubscribed`, [
      team.id,
    ]);

    const fanOutMet = fanOutRate >= TARGET.fanOutPerSecond;
    const p99Met = ok > 0 && result.latencyMs.p99 < TARGET.unsubscribeP99Ms;
    const lines = [
      '',
      `  broadcast to ${options.contacts.toLocaleString('en-US')} contacts; ${options.workers} worker(s), ${options.sinks} sinks; machine busy before the bench: ${background === null ? '?' : `${Math.round(background * 100)}%`}`,
      '',
      `  fan-out:      ${emails.toLocaleString('en-US')} durable emails in ${fanOutSeconds.toFixed(2)} s = ${Math.round(fanOutRate).toLocaleString('en-US')} emails/s  (target ≥ ${TARGET.fanOutPerSecond.toLocaleString('en-US')}: ${fanOutMet ? 'MET' : 'MISSED'})`,
      options.delivery
        ? `  delivery:     last email at the sinks ${deliveredSeconds.toFixed(1)} s after the request; ${received.toLocaleString('en-US')} received, ${take.duplicates} duplicates, ${take.unsigned} unsigned${received < emails ? '  INCOMPLETE (stalled 60 s)' : ''}`
        : '  delivery:     not measured (--no-delivery)',
      `  unsubscribe:  ${result.requests} one-click POSTs in an open loop at ${options.rate}/s, evenly spaced: p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms; answers ${JSON.stringify(result.statuses)} (0: errors)${result.lateStarts ? `, ${result.lateStarts} started late` : ''}  (target p99 < ${TARGET.unsubscribeP99Ms} ms: ${p99Met ? 'MET' : 'MISSED'})`,
      `                ${unsubscribed[0]!.n.toLocaleString('en-US')} contacts unsubscribed in Postgres`,
      '',
      '  CPU µs per email or request: the API, its own Postgres backends, the NATS server (shared), the',
      '  worker(s) delivering meanwhile; other = the rest of the machine, in % of a core',
      ...cpuTable([
        { label: 'fan-out, per email', cpu: fanOutSplit, operations: emails },
        { label: 'unsubscribe, per request', cpu: unsubscribeSplit, operations: result.requests },
      ]),
      '',
      `${' '.repeat(28)}${['per s', 'p50 ms', 'p99 ms', 'max ms'].map((c) => c.padStart(9)).join('')}`,
      `  ${'fan-out, emails'.padEnd(26)}${Math.round(fanOutRate).toLocaleString('en-US').padStart(9)}${'-'.padStart(9).repeat(3)}`,
      `  ${'unsubscribe, requests'.padEnd(26)}${[options.rate, result.latencyMs.p50, result.latencyMs.p99, result.latencyMs.max].map((v) => v.toLocaleString('en-US').padStart(9)).join('')}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
    if ((options.delivery && received < emails) || take.duplicates > 0 || unsubscribed[0]!.n < ok || other > 0) process.exitCode = 1;
    if (options.save) {
      const date = new Date().toISOString();
      const path = saveResults('broadcasts-bench', date, {
        date,
        background,
        options,
        fanOut: { emails, seconds: fanOutSeconds, perSecond: fanOutRate, met: fanOutMet, cpuSeconds: fanOutSplit },
        delivery: { seconds: deliveredSeconds, received, duplicates: take.duplicates },
        unsubscribe: {
          requests: result.requests,
          load: 'open loop, evenly spaced',
          latencyMs: result.latencyMs,
          statuses: result.statuses,
          ok,
          met: p99Met,
          cpuSeconds: unsubscribeSplit,
        },
        target: TARGET,
      });
      process.stdout.write(`  results: ${path}\n`);
    }
  } finally {
    await pg.end();
  }
}

/** The team's segment of `options.contacts` contacts across the recipient domains; answers its id. */
async function seed(pg: Client, teamId: string): Promise<string> {
  const { rows } = await pg.query<{ id: string }>(
    `INSERT INTO segments (id, team_id, name) VALUES (gen_random_uuid(), $1, 'Everyone') RETURNING id`,
    [teamId],
  );
  const segmentId = rows[0]!.id;
  await pg.query(
    `INSERT INTO contacts (id, team_id, email, first_name, properties)
     SELECT gen_random_uuid(), $1, 'reader' || g || '@inbox' || (g % ${DOMAINS} + 1) || '.bench.test', 'Reader' || g,
            CASE WHEN g % 2 = 0 THEN jsonb_build_object('company', 'Company ' || g) ELSE '{}'::jsonb END
       FROM generate_series(1, $2) g`,
    [teamId, options.contacts],
  );
  await pg.query(`INSERT INTO segment_contacts (segment_id, contact_id, team_id) SELECT $1, id, $2 FROM contacts WHERE team_id = $2`, [
    segmentId,
    teamId,
  ]);
  await pg.query(
    `INSERT INTO contact_properties (id, team_id, key, type, fallback_value) VALUES (gen_random_uuid(), $1, 'company', 'string', '"your company"')`,
    [teamId],
  );
  await pg.query('ANALYZE contacts; ANALYZE segment_contacts');
  return segmentId;
}

const cleanup = async () => {
  await world.cleanup(options.keep);
  if (options.keep) process.stderr.write(`bench: schema ${world.config.DATABASE_SCHEMA} kept: drop it when done\n`);
};
benchMain('broadcasts-bench', { cleanup }, run);
