import type { INestApplicationContext } from '@nestjs/common';
import { MetricsService } from '@herald/observability';
import type { MxSink } from '@herald/testing';
import { startWorker } from '../../apps/worker/src/worker.app';
import type { TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(180_000);

/** One large send to one destination, many times its worker queue. */
const LARGE = 3_000;
const QUEUE = 200;
/** The slow MX: 4 connections answering each end of data 40 ms late, about 100 messages a second at best. */
const CONNECTIONS = 4;
const SLOW_DATA_MS = 40;
/** Sent to another destination once the slow one's queue is full. */
const OTHER = 100;
/** Sent to one MX through two workers. */
const SHARED = 2_000;

async function until<T>(what: string, probe: () => Promise<T | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Issue 16 item 3: a send many times larger than DELIVERY_QUEUE_PER_DESTINATION to one MX. Its
 * send commands name their recipients' domain, so while the destination's queue is full the
 * worker leaves them in the stream, unclaimed, for when there will be room, instead of claiming,
 * building and signing each email only to defer it and do it all again on the retry.
 */
describe('back-pressure from a full destination queue (api → JetStream → worker → a slow MX)', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let slow: MxSink;
  let other: MxSink;

  beforeAll(async () => {
    world = await DeliveryWorld.start({
      DELIVERY_QUEUE_PER_DESTINATION: String(QUEUE),
      DELIVERY_CONNECTIONS_PER_DESTINATION: String(CONNECTIONS),
      DELIVERY_EXPIRY_SECONDS: '600',
      // The default: a called-back email does not wait for the relay's next tick.
      RECONCILE_INTERVAL_MS: '5000',
    });
    team = await world.team({ plan: 'pro-50k', rateLimit: 100_000 });
    slow = (await world.sink({ starttls: false })).behave({ delayMs: SLOW_DATA_MS });
    world.route('slow.test', { host: 'mx.slow.test', address: slow.host });
    other = await world.sink({ starttls: false });
    world.route('other.test', { host: 'mx.other.test', address: other.host });
  });
  afterAll(() => world?.close());

  const send = async (addresses: string[]): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < addresses.length; i += 100) {
      const chunk = addresses.slice(i, i + 100);
      const { data, error } = await team.resend.batch.send(chunk.map((to) => ({ from: team.from(), to, subject: `For ${to}`, text: `for ${to}` })));
      if (error) throw new Error(JSON.stringify(error));
      ids.push(...data!.data.map(({ id }) => id));
    }
    return ids;
  };
  /** A counter of the workers', summed over them and over the samples whose labels match. */
  const counter = async (workers: INestApplicationContext[], name: string, labels: Record<string, string> = {}): Promise<number> => {
    let sum = 0;
    for (const worker of workers) {
      const metric = worker.get(MetricsService).registry.getSingleMetric(name);
      const values = metric ? (await metric.get()).values : [];
      sum += values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((total, v) => total + v.value, 0);
    }
    return sum;
  };
  const churn = async (workers = [world.worker!]) => ({
    builds: await counter(workers, 'herald_delivery_message_builds_total'),
    rebuilds: await counter(workers, 'herald_delivery_message_builds_total', { build: 'repeat' }),
    claims: await counter(workers, 'herald_delivery_recipient_claims_total'),
    queueFull: await counter(workers, 'herald_delivery_queue_full_deferrals_total'),
    postponed: await counter(workers, 'herald_delivery_postponements_total', { step: 'postponed' }),
    calledBack: await counter(workers, 'herald_delivery_postponements_total', { step: 'called_back' }),
  });
  const attempts = async (ids: string[]): Promise<number> =>
    (await world.db.query(`SELECT sum(attempts)::int AS n FROM email_recipients WHERE email_id = ANY($1::uuid[])`, [ids])).rows[0].n as number;

  /**
   * Attempts after a DNS deferral: the test's own DNS server (in this jest process) can time out
   * on a loaded machine, and the worker rightly defers and retries, building again. Those retries
   * are not the rework this suite is about (claims, builds and deferrals caused by a full queue),
   * so the bounds leave them out, and the report names them.
   */
  const dnsRetries = async (ids: string[]): Promise<number> =>
    (
      await world.db.query(
        `SELECT coalesce(sum(r.attempts - 1), 0)::int AS n FROM email_recipients r
          WHERE r.email_id = ANY($1::uuid[]) AND r.attempts > 1
            AND EXISTS (SELECT 1 FROM email_events ev WHERE ev.email_id = r.email_id AND ev.type = 'email.delivery_delayed'
                          AND ev.data->'delivery'->>'response' ~ 'MX lookup for .* failed|no usable MX host')`,
        [ids],
      )
    ).rows[0].n as number;

  /** Why recipients were attempted more than once: their emails' events, by type, and how many such recipients. */
  const retried = async (ids: string[]): Promise<string> => {
    const { rows } = await world.db.query(
      `SELECT count(DISTINCT r.email_id)::int AS recipients, ev.type, ev.data->'delivery'->>'response' AS response, count(ev.id)::int AS events
         FROM email_recipients r LEFT JOIN email_events ev ON ev.email_id = r.email_id
        WHERE r.email_id = ANY($1::uuid[]) AND r.attempts > 1 GROUP BY 2, 3 ORDER BY 2, 3`,
      [ids],
    );
    return JSON.stringify(rows);
  };

  it(`delivers ${LARGE} emails to one MX once each, building each about once, with a queue of ${QUEUE}, while another destination's mail goes through`, async () => {
    const before = await churn();
    const started = Date.now();
    const large = await send(Array.from({ length: LARGE }, (_, i) => `r${i}@slow.test`));
    const accepted = Date.now() - started;

    // The slow destination's queue is full and its commands wait in the stream: the other destination's mail goes through meanwhile.
    await until('emails postponed', async () => (await churn()).postponed > before.postponed || false, 30_000);
    const otherStarted = Date.now();
    const atSlowThen = slow.received;
    const others = await send(Array.from({ length: OTHER }, (_, i) => `o${i}@other.test`));
    await until(`${OTHER} emails at the other MX`, async () => other.received >= OTHER || false, 20_000);
    const otherMs = Date.now() - otherStarted;
    const atSlowWhenOtherDone = slow.received;

    await until(`${LARGE} emails at the slow MX`, async () => slow.received >= LARGE || false, 120_000);
    const deliveredMs = Date.now() - started;
    await until(
      'every recipient recorded delivered',
      async () => {
        const { rows } = await world.db.query(
          `SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered FROM email_recipients WHERE email_id = ANY($1::uuid[])`,
          [[...large, ...others]],
        );
        return rows[0].delivered === LARGE + OTHER || false;
      },
      20_000,
    );
    const after = await churn();
    const { rows } = await world.db.query(`SELECT sum(attempts)::int AS attempts FROM email_recipients WHERE email_id = ANY($1::uuid[])`, [
      [...large, ...others],
    ]);
    const used = {
      builds: after.builds - before.builds,
      rebuilds: after.rebuilds - before.rebuilds,
      claims: after.claims - before.claims,
      queueFull: after.queueFull - before.queueFull,
      postponed: after.postponed - before.postponed,
      calledBack: after.calledBack - before.calledBack,
      attempts: rows[0].attempts as number,
      dnsRetries: await dnsRetries([...large, ...others]),
    };
    console.log(
      `destination back-pressure: ${LARGE} emails to one MX (queue ${QUEUE}) accepted in ${accepted} ms, delivered in ${deliveredMs} ms; ` +
        `${OTHER} to another MX delivered in ${otherMs} ms meanwhile (slow MX at ${atSlowThen} → ${atSlowWhenOtherDone}); ` +
        `${JSON.stringify(used)} for ${LARGE + OTHER} recipients`,
    );

    // Exactly once at the MXes.
    const copies = new Map<string, number>();
    for (const message of [...slow.messages, ...other.messages]) {
      for (const r of message.recipients) copies.set(r, (copies.get(r) ?? 0) + 1);
    }
    expect({ slow: slow.received, other: other.received, distinct: copies.size, twice: [...copies].filter(([, n]) => n > 1).length }).toEqual({
      slow: LARGE,
      other: OTHER,
      distinct: LARGE + OTHER,
      twice: 0,
    });
    // The other destination did not wait for the slow one.
    expect(atSlowWhenOtherDone).toBeLessThan(LARGE);
    // Work done about once per recipient: claims (Postgres's count and the worker's) and builds.
    const bound = Math.ceil((LARGE + OTHER) * 1.1) + used.dnsRetries;
    expect(used.attempts).toBeLessThanOrEqual(bound);
    expect(used.claims).toBeLessThanOrEqual(bound);
    expect(used.builds).toBeLessThanOrEqual(bound);
    expect(used.rebuilds).toBeLessThanOrEqual((LARGE + OTHER) * 0.1 + used.dnsRetries);
    expect(used.queueFull).toBeLessThanOrEqual((LARGE + OTHER) * 0.1);
    // The mechanism at work: emails waited unclaimed, and every one was called back.
    expect(used.postponed).toBeGreaterThan(0);
    expect(used.calledBack).toBeGreaterThanOrEqual(used.postponed);
  });

  it('two workers of the region share a large send to one MX: calls back land on either, each email built about once', async () => {
    const second = await startWorker(world.api.config);
    try {
      const workers = [world.worker!, second];
      const sink = (await world.sink({ starttls: false })).behave({ delayMs: SLOW_DATA_MS });
      world.route('shared.test', { host: 'mx.shared.test', address: sink.host });
      const before = await churn(workers);
      const started = Date.now();
      const ids = await send(Array.from({ length: SHARED }, (_, i) => `s${i}@shared.test`));
      await until(`${SHARED} emails at the MX`, async () => sink.received >= SHARED || false, 120_000);
      const deliveredMs = Date.now() - started;
      const after = await churn(workers);
      const used = {
        builds: after.builds - before.builds,
        queueFull: after.queueFull - before.queueFull,
        postponed: after.postponed - before.postponed,
        calledBack: after.calledBack - before.calledBack,
        attempts: await attempts(ids),
        dnsRetries: await dnsRetries(ids),
      };
      console.log(
        `destination back-pressure, two workers: ${SHARED} emails to one MX delivered in ${deliveredMs} ms; ${JSON.stringify(used)}; attempted more than once: ${await retried(ids)}`,
      );
      const copies = new Set(sink.messages.flatMap((m) => m.recipients));
      expect({ received: sink.received, distinct: copies.size }).toEqual({ received: SHARED, distinct: SHARED });
      expect(used.attempts).toBeLessThanOrEqual(SHARED * 1.1 + used.dnsRetries);
      expect(used.builds).toBeLessThanOrEqual(SHARED * 1.1 + used.dnsRetries);
      expect(used.postponed).toBeGreaterThan(0);
      // Called back, not left to their postponement (a claim period, 60 s here) to run out.
      expect(deliveredMs).toBeLessThan(55_000);
    } finally {
      await second.close();
    }
  });
});
