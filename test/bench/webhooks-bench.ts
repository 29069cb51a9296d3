// The webhooks benchmark of issue 5 (`npm run build && node dist/test/bench/webhooks-bench.js`;
// WEBHOOKS.md beside it). On this machine's Postgres and NATS, in its own schema and namespace,
// it creates one team with N webhooks (distinct paths of one local keep-alive receiver)
// subscribed to `email.delivered`, runs `herald webhooks` as a child process, publishes M events
// to the region's events stream (as EventPublisher does: Nats-Msg-Id = event id, `created_at`
// set at publish), and prints
//   - deliveries/s: successful deliveries ÷ time from the first publish to the last delivery;
//   - p50/p99/max lag from an event's created_at to its receipt by the endpoint;
// against the target of 2,000 deliveries/s. It checks every (event, endpoint) pair arrived
// exactly once and verifies the signature of a sample with `standardwebhooks`. Exit code 1 when
// a delivery is missing, duplicated or badly signed; a missed target only prints MISSED.
// Options: --events M (2000), --endpoints N (10), --rate R (publish R events/s instead of all at
// once: the lag at a steady load rather than behind a backlog), --answer-ms D (the receiver answers D ms
// after the body is in, as a remote endpoint would), --profile (CPU profile of the webhooks
// process into test/bench/results/profiles), --keep (leave the schema/streams for inspection).
import './aliases';
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { eventSubject } from '@herald/bus';
import { newSigningSecret } from '@herald/webhooks';
import { DIST } from './aliases';
import { BenchDelivery, BenchWebhookReceiver } from './bench-webhook-receiver';
import { freePort, HERALD_BIN, heraldCli } from './bench-processes';
import { BenchWorld } from './bench-world';

const TARGET_PER_SECOND = 2_000;
const EVENT_TYPE = 'email.delivered';
/** Publishes in flight at once. */
const PUBLISH_WINDOW = 512;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive integer`);
  return value;
}

const options = {
  events: option('events', 2_000),
  endpoints: option('endpoints', 10),
  rate: process.argv.includes('--rate') ? option('rate', 1) : null,
  answerMs: process.argv.includes('--answer-ms') ? option('answer-ms', 1) : 0,
  profile: process.argv.includes('--profile'),
  keep: process.argv.includes('--keep'),
};

interface WebhooksChild {
  child: ChildProcess;
  exited: Promise<unknown>;
  stop(): Promise<void>;
}

/** `herald webhooks` as a child process, ready once its ops port answers /health/ready. */
async function startWebhooksRole(env: NodeJS.ProcessEnv, nodeArgs: string[]): Promise<WebhooksChild> {
  const opsPort = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, HERALD_BIN, 'webhooks'], {
    env: { ...env, OPS_PORT: String(opsPort) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
    process.stderr.write(d);
  });
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`herald webhooks exited early: ${stderr}`);
    if (
      await fetch(`http://127.0.0.1:${opsPort}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`herald webhooks did not become ready within 60 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Analysis {
  lagsMs: number[];
  missing: number;
  duplicates: number;
  sampled: number;
  badSignatures: number;
}

/** Parses the bodies after the run: lags, exactly-once per (endpoint, event), the sample's signatures. */
function analyse(deliveries: BenchDelivery[], secrets: Map<string, string>, expected: number): Analysis {
  const seen = new Set<string>();
  const lagsMs: number[] = [];
  let duplicates = 0;
  let sampled = 0;
  let badSignatures = 0;
  for (const d of deliveries) {
    const json = JSON.parse(d.body) as { type: string; created_at: string; data: { email_id: string } };
    lagsMs.push(d.at - Date.parse(json.created_at));
    const key = `${d.path} ${json.data.email_id}`;
    if (seen.has(key)) duplicates++;
    seen.add(key);
    if (d.headers) {
      sampled++;
      try {
        new Webhook(secrets.get(d.path)!).verify(d.body, d.headers as Record<string, string>);
      } catch {
        badSignatures++;
      }
    }
  }
  lagsMs.sort((a, b) => a - b);
  return { lagsMs, missing: expected - seen.size, duplicates, sampled, badSignatures };
}

async function main(): Promise<number> {
  const world = new BenchWorld();
  // The receiver is plain http on loopback: the switches a local deployment would set.
  const env: NodeJS.ProcessEnv = { ...world.env, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8,::1' };
  const receiver = await BenchWebhookReceiver.start(20, options.answerMs);
  const pg = new Client({ connectionString: world.config.DATABASE_URL });
  const nodeArgs = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(DIST, '..', 'test', 'bench', 'results', 'profiles')}`] : [];
  let role: WebhooksChild | null = null;
  try {
    await heraldCli(env, 'migrate');
    const team = await heraldCli<{ id: string }>(env, 'team', 'create', '--name', 'Webhooks bench');
    const schema = world.config.DATABASE_SCHEMA;
    await pg.connect();
    const secrets = new Map<string, string>();
    for (let i = 0; i < options.endpoints; i++) {
      const path = `/hook-${i}`;
      const secret = newSigningSecret();
      secrets.set(path, secret);
      // Straight into the table: the bench measures delivery, not the /webhooks API.
      await pg.query(`INSERT INTO "${schema}".webhooks (id, team_id, endpoint, events, signing_secret) VALUES ($1, $2, $3, $4, $5)`, [
        randomUUID(),
        team.id,
        receiver.url(path),
        [EVENT_TYPE],
        secret,
      ]);
    }

    role = await startWebhooksRole(env, nodeArgs);
    const expected = options.events * options.endpoints;
    process.stderr.write(`bench: ${options.events} events × ${options.endpoints} endpoints = ${expected} deliveries\n`);

    const nc = await connect({ servers: world.config.NATS_URL });
    const js = jetstream(nc);
    const subject = eventSubject(world.config.NATS_NAMESPACE, world.config.HERALD_REGION, EVENT_TYPE);
    const firstPublish = Date.now();
    let inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < options.events; i++) {
      const due = options.rate === null ? 0 : firstPublish + (i * 1000) / options.rate;
      if (due > Date.now()) {
        await Promise.all(inFlight);
        inFlight = [];
        await new Promise((r) => setTimeout(r, due - Date.now()));
      }
      const id = randomUUID();
      const createdAt = new Date().toISOString();
      const event = {
        id,
        type: EVENT_TYPE,
        created_at: createdAt,
        team_id: team.id,
        data: {
          email_id: id,
          from: 'Acme <hello@acme.test>',
          to: [`user-${i}@example.com`],
          subject: 'Your receipt',
          created_at: createdAt,
        },
      };
      inFlight.push(js.publish(subject, JSON.stringify(event), { msgID: id }));
      if (inFlight.length >= PUBLISH_WINDOW) {
        await Promise.all(inFlight);
        inFlight = [];
      }
    }
    await Promise.all(inFlight);
    const publishedIn = Date.now() - firstPublish;
    await nc.close();

    await receiver.waitFor(expected, 30_000);
    const last = receiver.deliveries.reduce((max, d) => Math.max(max, d.at), 0);
    const seconds = (last - firstPublish) / 1000;
    const perSecond = receiver.count / seconds;
    // The receiver answers before the role records the attempt: let the last ones commit.
    const pending = async () =>
      Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".webhook_messages WHERE status <> 'success'`)).rows[0]!.n);
    for (const until = Date.now() + 10_000; (await pending()) > 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 100));
    const statuses = (await pg.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM "${schema}".webhook_messages GROUP BY status`))
      .rows;
    const attempts = Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".webhook_attempts`)).rows[0]!.n);

    const a = analyse(receiver.deliveries, secrets, expected);
    const ms = (v: number) => `${Math.round(v)} ms`;
    // A paced run offers less than the target, so only an unpaced one can meet or miss it.
    const verdict = options.rate !== null ? 'n/a (paced run)' : perSecond >= TARGET_PER_SECOND ? 'MET' : 'MISSED';
    const pacing = options.rate === null ? 'published at once' : `paced at ${options.rate} events/s`;
    console.log(
      `webhooks bench — ${options.events} ${EVENT_TYPE} events × ${options.endpoints} endpoints (one local keep-alive receiver), ${pacing}`,
    );
    console.log(`  published ${options.events} events in ${ms(publishedIn)}; last delivery ${ms(last - firstPublish)} after the first publish`);
    console.log(`  deliveries:        ${receiver.count} of ${expected} (missing ${a.missing}, duplicates ${a.duplicates})`);
    console.log(`  deliveries/s:      ${Math.round(perSecond)}   target ≥ ${TARGET_PER_SECOND}: ${verdict}`);
    if (options.answerMs > 0) {
      console.log(
        `  in flight:         at most ${receiver.maxOpen} requests open at the receiver at once (each answered after ${options.answerMs} ms)`,
      );
    }
    console.log(`  lag event→receipt: p50 ${ms(percentile(a.lagsMs, 50))}, p99 ${ms(percentile(a.lagsMs, 99))}, max ${ms(a.lagsMs.at(-1) ?? NaN)}`);
    console.log(`  signatures:        ${a.sampled - a.badSignatures} of ${a.sampled} sampled deliveries verify with standardwebhooks`);
    console.log(`  messages:          ${statuses.map((s) => `${s.status} ${s.n}`).join(', ')}; attempts recorded ${attempts}`);
    return a.missing === 0 && a.duplicates === 0 && a.badSignatures === 0 && a.sampled > 0 ? 0 : 1;
  } finally {
    await role?.stop();
    await receiver.close();
    await pg.end().catch(() => undefined);
    if (!options.keep) await world.cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);
