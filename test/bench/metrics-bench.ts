// The metrics benchmark of issue 14 (`npm run bench:metrics`; README.md beside it). On this
// machine's Postgres and NATS, in its own schema and namespace, it creates a team with 10
// sending domains (POST /domains on a `herald api` child), publishes a backlog of M email events
// spread over the last 30 days and the 10 domains to the region's events stream (sent, delivered,
// bounced, delayed, complained, opened and clicked, as the engine and tracking publish them),
// then starts `herald metrics` and prints
//   - events/s: events counted ÷ time from the role being ready to the backlog being counted
//     (counted_events holding every event and the durable with nothing pending or unacked);
//   - GET /stats over the last 30 days at hourly granularity (720 buckets × 10 domains of rollups):
//     p50/p99/max of N requests at C at once, for the whole team and for one domain;
// against the targets of 10,000 events/s and a p99 under 50 ms. It checks the rollups' sums equal
// the events published (exit code 1 otherwise); a missed target prints MISSED.
// Options: --events M (100000), --requests N (500), --concurrency C (1: one dashboard's requests), --keep.
import './aliases';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { eventsStreamName, eventSubject } from '@herald/bus';
import { heraldCli, startHeraldApi, startHeraldRole, type ServerProcess } from './bench-processes';
import { BenchWorld } from './bench-world';

const TARGET_EVENTS_PER_SECOND = 10_000;
const TARGET_P99_MS = 50;
const DOMAINS = 10;
const DAY_MS = 86_400_000;
const PUBLISH_WINDOW = 1024;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive integer`);
  return value;
}

const options = {
  events: option('events', 100_000),
  requests: option('requests', 500),
  concurrency: option('concurrency', 1),
  keep: process.argv.includes('--keep'),
};

const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/** Event i of the backlog: its type and data, on domain i % 10, at a time in the last 30 days. */
function backlogEvent(i: number, teamId: string, domains: string[], now: number) {
  const domain = domains[i % domains.length]!;
  const roll = i % 100;
  const type =
    roll < 40
      ? 'email.sent'
      : roll < 78
        ? 'email.delivered'
        : roll < 80
          ? 'email.bounced'
          : roll < 82
            ? 'email.delivery_delayed'
            : roll === 82
              ? 'email.complained'
              : roll < 95
                ? 'email.opened'
                : 'email.clicked';
  const createdAt = new Date(now - ((i * 7_919_731) % (30 * DAY_MS))).toISOString();
  const data: Record<string, unknown> = {
    email_id: randomUUID(),
    created_at: createdAt,
    from: `Acme <news@${domain}>`,
    to: [`user-${i}@example.com`],
    subject: 'Your weekly digest',
  };
  if (type === 'email.bounced') data.bounce = { type: i % 3 ? 'Permanent' : 'Transient', subType: 'General', message: 'no', diagnosticCode: [] };
  if (type === 'email.opened' || type === 'email.clicked')
    data.tracking = { machine: i % 5 === 0, reason: i % 5 === 0 ? 'apple_privacy' : null, unique: i % 2 === 0 };
  return { id: randomUUID(), type, created_at: createdAt, team_id: teamId, data };
}

async function main(): Promise<number> {
  const world = new BenchWorld();
  const pg = new Client({ connectionString: world.config.DATABASE_URL });
  let api: ServerProcess | null = null;
  let metrics: ServerProcess | null = null;
  const schema = world.config.DATABASE_SCHEMA;
  try {
    const loadBefore = load();
    await heraldCli(world.env, 'migrate');
    const team = await heraldCli<{ id: string }>(world.env, 'team', 'create', '--name', 'Metrics bench', '--rate-limit', '1000000');
    const { token } = await heraldCli<{ token: string }>(world.env, 'key', 'create', '--team', team.id, '--name', 'Bench key');
    api = await startHeraldApi(world.env, 1);
    const domains: { id: string; name: string }[] = [];
    for (let d = 0; d < DOMAINS; d++) {
      const name = `d${d}-${world.domain}`;
      const response = await fetch(`${api.url}/domains`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      if (!response.ok) throw new Error(`POST /domains answered ${response.status}`);
      domains.push({ id: ((await response.json()) as { id: string }).id, name });
    }

    // The backlog, all on the stream before the consumer starts.
    const nc = await connect({ servers: world.config.NATS_URL });
    const js = jetstream(nc);
    const now = Date.now();
    const published = { sent: 0, bounced: 0, opened: 0 };
    let inFlight: Promise<unknown>[] = [];
    const publishStart = Date.now();
    for (let i = 0; i < options.events; i++) {
      const event = backlogEvent(
        i,
        team.id,
        domains.map((d) => d.name),
        now,
      );
      if (event.type === 'email.sent') published.sent++;
      if (event.type === 'email.bounced') published.bounced++;
      if (event.type === 'email.opened') published.opened++;
      inFlight.push(js.publish(eventSubject(world.config.NATS_NAMESPACE, 'us-east-1', event.type), JSON.stringify(event), { msgID: event.id }));
      if (inFlight.length >= PUBLISH_WINDOW) {
        await Promise.all(inFlight);
        inFlight = [];
      }
    }
    await Promise.all(inFlight);
    const publishedIn = Date.now() - publishStart;

    await pg.connect();
    const counted = async () => Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".counted_events`)).rows[0]!.n);
    const jsm = await jetstreamManager(nc);
    const drained = async () => {
      const info = await jsm.consumers.info(eventsStreamName(world.config.NATS_NAMESPACE, 'us-east-1'), 'metrics').catch(() => null);
      return info !== null && info.num_pending === 0 && info.num_ack_pending === 0;
    };
    const loadAtStart = load();
    metrics = await startHeraldRole(world.env, 'metrics');
    const readyAt = Date.now();
    const countedAtReady = await counted();
    let doneAt = 0;
    for (const deadline = Date.now() + 600_000; Date.now() < deadline;) {
      if ((await counted()) === options.events && (await drained())) {
        doneAt = Date.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await nc.close();
    if (!doneAt) throw new Error(`the backlog was not counted within 10 minutes (${await counted()} of ${options.events})`);
    const eventsPerSecond = (options.events - countedAtReady) / ((doneAt - readyAt) / 1000);
    const sums = (
      await pg.query<{ sent: string; bounced: string; opened: string }>(
        `SELECT sum(sent) AS sent, sum(bounced_hard + bounced_soft) AS bounced, sum(opened_human + opened_machine) AS opened FROM "${schema}".metric_rollups`,
      )
    ).rows[0]!;
    const rollupsMatch =
      Number(sums.sent) === published.sent && Number(sums.bounced) === published.bounced && Number(sums.opened) === published.opened;
    const rows = Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".metric_rollups`)).rows[0]!.n);

    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const verdict = (met: boolean) => (met ? 'MET' : 'MISSED');
    console.log(`metrics bench — ${options.events} events over 30 days × ${DOMAINS} domains, on the stream before the consumer started`);
    console.log(`  load before: ${loadBefore}`);
    console.log(`  published the backlog in ${publishedIn} ms; load as the consumer started: ${loadAtStart}`);
    console.log(
      `  rollup consumer:   ${Math.round(eventsPerSecond)} events/s (${options.events - countedAtReady} events in ${doneAt - readyAt} ms after ready)   target ≥ ${TARGET_EVENTS_PER_SECOND}: ${verdict(eventsPerSecond >= TARGET_EVENTS_PER_SECOND)}`,
    );
    console.log(`  rollups:           ${rows} rows; sums ${rollupsMatch ? 'equal' : 'DIFFER FROM'} the published events`);

    // GET /stats: 30 days of hours, the whole team and one domain.
    const to = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
    const from = new Date(to.getTime() - 30 * DAY_MS);
    const measure = async (query: string) => {
      const url = `${api!.url}/stats?from=${from.toISOString()}&to=${to.toISOString()}&granularity=hour${query}`;
      const once = async () => {
        const started = performance.now();
        const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
        const body = (await response.json()) as { data?: unknown[] };
        if (!response.ok || body.data?.length !== 720) throw new Error(`GET /stats answered ${response.status} with ${body.data?.length} buckets`);
        return performance.now() - started;
      };
      for (let i = 0; i < 20; i++) await once();
      const times: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (next++ < options.requests) times.push(await once());
        }),
      );
      return times.sort((a, b) => a - b);
    };
    const team30 = await measure('');
    const domain30 = await measure(`&domain_id=${domains[0]!.id}`);
    const loadAfter = load();

    for (const [what, times] of [
      ['whole team', team30],
      ['one domain', domain30],
    ] as const) {
      const p99 = percentile(times, 99);
      console.log(
        `  GET /stats 30 d hourly, ${what}: p50 ${ms(percentile(times, 50))}, p99 ${ms(p99)}, max ${ms(times.at(-1)!)} (${times.length} requests, ${options.concurrency} at once)   target p99 < ${TARGET_P99_MS} ms: ${verdict(p99 < TARGET_P99_MS)}`,
      );
    }
    console.log(`  load after: ${loadAfter}`);
    return rollupsMatch ? 0 : 1;
  } finally {
    await metrics?.stop();
    await api?.stop();
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
