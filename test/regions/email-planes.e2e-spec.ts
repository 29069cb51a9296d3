import type { INestApplicationContext } from '@nestjs/common';
import { Client } from 'pg';
import { loadConfig } from '@herald/config';
import { CONTROL_PLANE_TABLES } from '@herald/database';
import { DomainsRepository } from '@herald/domains';
import { MxSink, startSupercluster, Supercluster, TcpProxy, TestDnsServer, uniqueSuffix } from '@herald/testing';
import { startWorker } from '../../apps/worker/src/worker.app';
import { call, markVerified, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { waitFor } from '../support/herald-all';
import { NatsProbe } from '../support/nats-probe';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.44';
/** The distance between the regions, each way, on every connection that crosses it. */
const CROSSING_MS = 50;

/**
 * Issue 15, items 1 and 2: each region's email plane in its own database, and the regions 50 ms
 * apart. us-east-1's API and eu-west-1's, each with its own region's database as DATABASE_URL and
 * its own region's NATS cluster, share the control database and the idempotency registry (Redis),
 * both in us-east-1; each names the other region's database in REGION_DATABASE_URLS. Every
 * connection that crosses between the regions (the gateways, eu-west-1's to the control database,
 * us-east-1's database and Redis, us-east-1's to eu-west-1's database) passes through a proxy that
 * holds each packet 50 ms. An email is stored and dispatched only in its from domain's region,
 * whichever API accepted it; eu-west-1's worker, on eu-west-1's database and NATS, delivers
 * eu-west-1's emails; either API finds an email by its id and lists a team's emails of both
 * regions in one order.
 */
describe("each region's email plane in its own database, the regions 50 ms apart", () => {
  const schema = `t_planes_${uniqueSuffix()}`;
  const euDatabase = `herald_planes_eu_${process.pid}`;
  let controlUrl: string;
  let euUrl: string;
  let cluster: Supercluster;
  const proxies: TcpProxy[] = [];
  let us: TestApi;
  let eu: TestApi;
  let worker: INestApplicationContext;
  let dns: TestDnsServer;
  let sink: MxSink;
  let usDb: Client;
  let euDb: Client;
  const nats: Record<string, NatsProbe> = {};
  let team: TestTeam;
  let euDomain: string;

  /** `url` as the other region reaches it: through a proxy 50 ms away. */
  const distant = async (url: string): Promise<string> => {
    const target = new URL(url);
    const proxy = (await TcpProxy.start({ host: target.hostname, port: Number(target.port) })).latency(CROSSING_MS);
    proxies.push(proxy);
    return proxy.rewrite(url);
  };

  beforeAll(async () => {
    const base = loadConfig(process.env);
    controlUrl = base.DATABASE_URL;
    const admin = new Client({ connectionString: controlUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${euDatabase} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${euDatabase}`);
    await admin.end();
    const url = new URL(controlUrl);
    url.pathname = `/${euDatabase}`;
    euUrl = url.href;

    cluster = await startSupercluster({ regions: [{ name: 'us-east-1' }, { name: 'eu-west-1' }], gatewayLatencyMs: CROSSING_MS });
    const inbox = await startInbox(SINK_HOST);
    ({ dns, sink } = inbox);
    const { port } = inbox;
    const shared = {
      HERALD_REGIONS: 'us-east-1,eu-west-1',
      DATABASE_SCHEMA: schema,
      NATS_PLACE_BY_REGION: 'true',
      DNS_SERVERS: dns.address(),
      DELIVERY_PORT: String(port),
      DOMAIN_CACHE_MS: '0',
    };
    us = await startTestApi({
      ...shared,
      HERALD_REGION: 'us-east-1',
      NATS_URL: cluster.urls('us-east-1').join(','),
      REGION_DATABASE_URLS: `eu-west-1=${await distant(euUrl)}`,
    });
    // eu-west-1's database gets its schema as its API starts. The same Redis prefix and NATS namespace: one deployment, two regions.
    const fromEu = await distant(controlUrl);
    eu = await startTestApi({
      ...shared,
      HERALD_REGION: 'eu-west-1',
      NATS_URL: cluster.urls('eu-west-1').join(','),
      DATABASE_URL: euUrl,
      CONTROL_DATABASE_URL: fromEu,
      REGION_DATABASE_URLS: `us-east-1=${fromEu}`,
      REDIS_URL: await distant(base.REDIS_URL),
      // Redis is us-east-1's: eu-west-1's limits answer without waiting for it, far from a limit (libs/limits far-limits.ts).
      REDIS_REGION: 'us-east-1',
      REDIS_PREFIX: us.config.REDIS_PREFIX,
      NATS_NAMESPACE: us.config.NATS_NAMESPACE,
    });
    worker = await startWorker({ ...eu.config });

    [usDb, euDb] = [new Client({ connectionString: controlUrl }), new Client({ connectionString: euUrl })];
    for (const db of [usDb, euDb]) {
      await db.connect();
      await db.query(`SET search_path TO "${schema}"`);
    }
    nats['us-east-1'] = await NatsProbe.open(us.config);
    nats['eu-west-1'] = await NatsProbe.open(eu.config);
    team = await us.team({ region: 'us-east-1' });
    const created = await call(us.url, team.token, 'POST', '/domains', { name: `eu-${uniqueSuffix()}.acme.test`, region: 'eu-west-1' });
    expect(created.status).toBe(200);
    await markVerified(us.app.get(DomainsRepository), created.body.id);
    euDomain = created.body.name;
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await Promise.allSettled(Object.values(nats).map((probe) => probe.close()));
    await usDb?.end();
    await euDb?.end();
    await eu?.close();
    await us?.close();
    await sink?.close();
    await dns?.close();
    await Promise.allSettled(proxies.map((proxy) => proxy.close()));
    await cluster?.stop();
    const admin = new Client({ connectionString: controlUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${euDatabase} WITH (FORCE)`);
    await admin.end();
  }, 60_000);

  const send = (api: TestApi, from: string, subject: string, headers: Record<string, string> = {}) =>
    call(api.url, team.token, 'POST', '/emails', { from, to: 'ana@inbox.test', subject, text: 'hi' }, headers);
  const rows = async (db: Client, table: string, column: string, ids: string[]) =>
    (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = ANY($1::uuid[])`, [ids])).rows[0].n as number;
  const lastEvent = async (db: Client, id: string) => (await db.query(`SELECT last_event FROM emails WHERE id = $1`, [id])).rows[0]?.last_event;

  it("stores an email only in its from domain's region's database, whichever API accepts it, and eu-west-1's worker delivers eu-west-1's", async () => {
    const sent = {
      usAtUs: await send(us, team.from('a'), 'us at us'),
      euAtUs: await send(us, `b@${euDomain}`, 'eu at us'),
      usAtEu: await send(eu, team.from('c'), 'us at eu'),
      euAtEu: await send(eu, `d@${euDomain}`, 'eu at eu'),
    };
    expect(Object.values(sent).map((s) => s.status)).toEqual([200, 200, 200, 200]);
    const usIds = [sent.usAtUs.body.id, sent.usAtEu.body.id];
    const euIds = [sent.euAtUs.body.id, sent.euAtEu.body.id];
    for (const table of ['emails', 'email_recipients']) {
      const column = table === 'emails' ? 'id' : 'email_id';
      expect({ table, us: await rows(usDb, table, column, usIds), eu: await rows(euDb, table, column, usIds) }).toEqual({
        table,
        us: usIds.length,
        eu: 0,
      });
      expect({ table, us: await rows(usDb, table, column, euIds), eu: await rows(euDb, table, column, euIds) }).toEqual({
        table,
        us: 0,
        eu: euIds.length,
      });
    }
    // The control plane stays in us-east-1's database: the team and its domains are not in eu-west-1's.
    expect((await euDb.query(`SELECT count(*)::int AS n FROM domains WHERE team_id = $1`, [team.teamId])).rows[0].n).toBe(0);
    // Each send command went to its region's stream only, whichever API published it: us-east-1's
    // (no worker takes from it here) holds its two and nothing else; eu-west-1's worker takes its
    // commands from eu-west-1's stream alone, so its deliveries below show where theirs went.
    expect((await nats['us-east-1'].sendCommands('us-east-1')).sort()).toEqual([...usIds].sort());
    for (const id of usIds) expect(await nats['eu-west-1'].sendCommands('eu-west-1')).not.toContain(id);

    await waitFor(
      async () => (await Promise.all(euIds.map((id) => lastEvent(euDb, id)))).every((e) => e === 'delivered'),
      "eu-west-1's emails delivered",
    );
    for (const subject of ['eu at us', 'eu at eu'])
      expect(sink.messages.filter((m) => m.raw.toString().includes(`Subject: ${subject}`))).toHaveLength(1);
    // No us-east-1 worker runs: its emails wait in us-east-1's database, untouched by eu-west-1's.
    expect(await Promise.all(usIds.map((id) => lastEvent(usDb, id)))).toEqual(['queued', 'queued']);
  });

  it("records a hard bounce in eu-west-1's database and its suppression in the control plane's, and suppresses the next send", async () => {
    sink.recipientRule('gone@inbox.test', { reject: '550 5.1.1 no such user' });
    const to = (subject: string) =>
      call(us.url, team.token, 'POST', '/emails', { from: `e@${euDomain}`, to: 'gone@inbox.test', subject, text: 'hi' });
    const bounced = (await to('bounces')).body.id;
    await waitFor(async () => (await lastEvent(euDb, bounced)) === 'bounced', 'the hard bounce recorded');
    const suppressed = `SELECT origin, source_id FROM suppressions WHERE team_id = $1 AND email = 'gone@inbox.test'`;
    expect((await usDb.query(suppressed, [team.teamId])).rows).toEqual([{ origin: 'bounce', source_id: bounced }]);
    expect((await euDb.query(suppressed, [team.teamId])).rows).toEqual([]);
    const next = (await to('suppressed next')).body.id;
    await waitFor(async () => (await lastEvent(euDb, next)) === 'suppressed', 'the next send suppressed');
    expect(sink.messages.filter((m) => m.raw.toString().includes('Subject: suppressed next'))).toHaveLength(0);
  });

  it('answers GET /emails/:id and GET /emails alike at either API, in one order across both regions', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await send(i % 2 ? eu : us, i % 3 ? team.from(`m${i}`) : `m${i}@${euDomain}`, `list ${i}`)).body.id);
    for (const id of ids) {
      const [atUs, atEu] = [await call(us.url, team.token, 'GET', `/emails/${id}`), await call(eu.url, team.token, 'GET', `/emails/${id}`)];
      expect(atUs.status).toBe(200);
      expect(atEu.body).toEqual(atUs.body);
    }
    const walk = async (api: TestApi) => {
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: { body: { data: { id: string }[]; has_more: boolean } } = await call(
          api.url,
          team.token,
          'GET',
          `/emails?limit=2${after ? `&after=${after}` : ''}`,
        );
        seen.push(...page.body.data.map((e) => e.id));
        if (!page.body.has_more) return seen;
        after = seen[seen.length - 1];
      }
    };
    const [fromUs, fromEu] = [await walk(us), await walk(eu)];
    expect(fromEu).toEqual(fromUs);
    // Newest first, every email of the team once, from both databases.
    expect(fromUs.slice(0, 6)).toEqual([...ids].reverse());
    expect(new Set(fromUs).size).toBe(fromUs.length);
    const back = await call(us.url, team.token, 'GET', `/emails?limit=2&before=${ids[1]}`);
    expect(back.body.data.map((e: { id: string }) => e.id)).toEqual([ids[3], ids[2]]);
  });

  it('stores one email for one Idempotency-Key sent to both APIs at the same moment, 20 times', async () => {
    for (let i = 0; i < 20; i++) {
      const key = `both-${i}-${uniqueSuffix()}`;
      const from = i % 2 ? team.from('same') : `same@${euDomain}`;
      const answers = await Promise.all([us, eu].map((api) => send(api, from, `same key ${i}`, { 'idempotency-key': key })));
      for (const a of answers) expect([200, 409]).toContain(a.status);
      const ids = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.id));
      expect(ids.size).toBe(1);
      const stored = await Promise.all(
        [usDb, euDb].map(async (db) => (await db.query(`SELECT count(*)::int AS n FROM emails WHERE idempotency_key = $1`, [key])).rows[0].n),
      );
      expect(stored[0] + stored[1]).toBe(1);
    }
  });

  // Last: after every send, bounce, suppression and keyed request above, the control plane's
  // tables in eu-west-1's database (the migrations create them in every database) are still
  // empty. A control-plane write made in an email-plane transaction would have landed there.
  it("writes nothing of the control plane in eu-west-1's database", async () => {
    const counts: Record<string, number> = {};
    for (const table of CONTROL_PLANE_TABLES) counts[table] = (await euDb.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
    expect(counts).toEqual(Object.fromEntries(CONTROL_PLANE_TABLES.map((t) => [t, 0])));
  });
});
