import type { INestApplicationContext } from '@nestjs/common';
import { Client } from 'pg';
import { MxSink, startSupercluster, Supercluster, TestDnsServer } from '@herald/testing';
import { startWorker } from '../../apps/worker/src/worker.app';
import { call, startTestApi, TestApi } from '../support/api-harness';
import { waitFor } from '../support/herald-all';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.43';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue 15, item 4, the NATS half: eu-west-1's NATS cluster lost (its server killed) while
 * us-east-1's API serves both regions' domains on a private two-region supercluster, with each
 * region's worker on its own region's server. us-east-1's domains carry on; eu-west-1's sends are
 * answered 503 with Retry-After once the API has seen the region unreachable (never a 200 for an
 * email that would wait unseen); what was accepted before that is delivered exactly once after
 * eu-west-1 returns, and its sends are accepted again. Postgres is still shared (item 2 is later).
 */
describe('a region down: its NATS cluster lost', () => {
  let cluster: Supercluster;
  let api: TestApi;
  const workers: INestApplicationContext[] = [];
  let dns: TestDnsServer;
  let sink: MxSink;
  let db: Client;

  beforeAll(async () => {
    cluster = await startSupercluster({ regions: [{ name: 'us-east-1' }, { name: 'eu-west-1' }] });
    const inbox = await startInbox(SINK_HOST);
    ({ dns, sink } = inbox);
    const { port } = inbox;
    api = await startTestApi({
      HERALD_REGION: 'us-east-1',
      HERALD_REGIONS: 'us-east-1,eu-west-1',
      NATS_URL: cluster.urls('us-east-1').join(','),
      NATS_PLACE_BY_REGION: 'true',
      DNS_SERVERS: dns.address(),
      DELIVERY_PORT: String(port),
      DOMAIN_CACHE_MS: '0',
      // The outbox relays an unconfirmed dispatch a second after its request, every 200 ms.
      DISPATCH_GRACE_SECONDS: '1',
      RECONCILE_INTERVAL_MS: '200',
    });
    for (const region of ['us-east-1', 'eu-west-1'])
      workers.push(await startWorker({ ...api.config, HERALD_REGION: region, NATS_URL: cluster.urls(region) }));
    db = new Client({ connectionString: api.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${api.config.DATABASE_SCHEMA}"`);
  }, 90_000);

  afterAll(async () => {
    // A worker whose region was left down (a failed run) may fail to drain: the rest still close.
    await Promise.allSettled(workers.map((worker) => worker.close()));
    await db?.end();
    await api?.close();
    await sink?.close();
    await dns?.close();
    await cluster?.stop();
  }, 60_000);

  const delivered = async (ids: string[]) =>
    (await db.query(`SELECT count(*)::int AS n FROM emails WHERE id = ANY($1::uuid[]) AND last_event = 'delivered'`, [ids])).rows[0].n === ids.length;
  const stateOf = async (ids: string[]) => ({
    emails: (await db.query(`SELECT id, last_event, dispatch_count FROM emails WHERE id = ANY($1::uuid[])`, [ids])).rows,
    dispatches: (await db.query(`SELECT region, email_ids, due_at FROM email_dispatches WHERE email_ids && $1::uuid[]`, [ids])).rows,
  });
  const received = (subject: string) => sink.messages.filter((m) => m.raw.toString().includes(`Subject: ${subject}`)).length;

  it("serves us-east-1's domains, refuses eu-west-1's with 503 while it is down, and delivers what it accepted once after", async () => {
    const us = await api.team({ region: 'us-east-1' });
    const eu = await api.team({ region: 'us-east-1', domainRegion: 'eu-west-1' });
    let n = 0;
    const send = async (team: typeof us) => {
      const subject = `${team === us ? 'us' : 'eu'} #${++n}#`;
      const started = performance.now();
      const r = await call(api.url, team.token, 'POST', '/emails', { from: team.from(), to: 'ana@inbox.test', subject, text: 'hi' });
      return { ...r, subject, ms: performance.now() - started };
    };

    const before = [await send(us), await send(eu)];
    expect(before.map((s) => s.status)).toEqual([200, 200]);
    await waitFor(() => delivered(before.map((s) => s.body.id)), 'both regions to deliver before the outage');

    await cluster.stopRegion('eu-west-1');
    // Sends for eu-west-1 until the API has seen it unreachable: the ones before are accepted (committed, in the outbox).
    const accepted: Awaited<ReturnType<typeof send>>[] = [];
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let attempt = 0; attempt < 10 && !refused; attempt++) {
      const s = await send(eu);
      if (s.status === 200) accepted.push(s);
      else refused = s;
      await sleep(100);
    }
    expect({ status: refused?.status, name: refused?.body.name, retryAfter: refused?.headers.get('retry-after') }).toEqual({
      status: 503,
      name: 'service_unavailable',
      retryAfter: '1',
    });
    expect(refused!.body.message).toContain('Region eu-west-1 cannot take new emails right now');
    expect(accepted.length).toBeLessThanOrEqual(2);

    // us-east-1's domains meanwhile: accepted and delivered (their latency is printed below: a busy
    // machine's figure, not asserted).
    const during: Awaited<ReturnType<typeof send>>[] = [];
    for (let i = 0; i < 10; i++) during.push(await send(us));
    expect(during.map((s) => s.status)).toEqual(new Array(10).fill(200));
    const slowest = Math.max(...during.map((s) => s.ms));
    await waitFor(() => delivered(during.map((s) => s.body.id)), "us-east-1's emails to be delivered during the outage");
    expect((await send(eu)).status).toBe(503);

    await cluster.startRegion('eu-west-1');
    const ids = accepted.map((s) => s.body.id);
    await waitFor(() => delivered(ids), 'the emails accepted before the outage to be delivered', 60_000).catch(async (error: Error) => {
      throw new Error(`${error.message}; their rows: ${JSON.stringify(await stateOf(ids))}`);
    });
    // Accepted again once a probe reaches eu-west-1's stream.
    let again = await send(eu);
    for (let i = 0; again.status === 503 && i < 50; i++) {
      await sleep(200);
      again = await send(eu);
    }
    expect(again.status).toBe(200);
    await waitFor(() => delivered([again.body.id]), 'a send after the outage to be delivered');
    await sleep(1_000);
    for (const s of [...before, ...accepted, ...during, again])
      expect({ subject: s.subject, received: received(s.subject) }).toEqual({ subject: s.subject, received: 1 });
    // Refused sends stored nothing.
    expect((await db.query(`SELECT count(*)::int AS n FROM emails WHERE subject = $1`, [refused!.subject])).rows).toEqual([{ n: 0 }]);
    console.log(
      `region down: ${accepted.length} eu-west-1 send(s) accepted before it was seen down; us-east-1 sends meanwhile ` +
        `p50 ${during
          .map((s) => s.ms)
          .sort((a, b) => a - b)[5]
          .toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms`,
    );
  }, 180_000);
});
