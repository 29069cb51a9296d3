import type { INestApplicationContext } from '@nestjs/common';
import { Client } from 'pg';
import { runMigrations } from '@herald/database';
import { DomainsRepository } from '@herald/domains';
import { MxSink, PrivatePostgres, startPrivatePostgres, TestDnsServer } from '@herald/testing';
import { startWorker } from '../../apps/worker/src/worker.app';
import { call, markVerified, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { DashboardClient } from '../support/dashboard-client';
import { verifiedUser } from '../support/dashboard-browser';
import { waitFor } from '../support/herald-all';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.45';

/**
 * Issue 15, item 4, the Postgres half: eu-west-1's email plane on a Postgres server of its own,
 * killed while us-east-1's API serves both regions' domains. us-east-1's domains carry on; eu-west-1's
 * sends are answered 503 with Retry-After (never a 200 for an email that could be lost); the emails
 * eu-west-1 accepted before the outage are delivered once after its Postgres returns.
 */
describe("a region down: its email plane's Postgres lost", () => {
  let euPostgres: PrivatePostgres;
  let api: TestApi;
  const workers: INestApplicationContext[] = [];
  let dns: TestDnsServer;
  let sink: MxSink;
  let usDb: Client;
  let us: TestTeam;
  let eu: TestTeam;
  /** A dashboard user's team with a domain in each region, and its REST key. */
  let both: { client: DashboardClient; teamId: string; token: string };

  beforeAll(async () => {
    euPostgres = await startPrivatePostgres();
    const inbox = await startInbox(SINK_HOST);
    ({ dns, sink } = inbox);
    const { port } = inbox;
    api = await startTestApi({
      HERALD_REGION: 'us-east-1',
      HERALD_REGIONS: 'us-east-1,eu-west-1',
      REGION_DATABASE_URLS: `eu-west-1=${euPostgres.url}`,
      DNS_SERVERS: dns.address(),
      DELIVERY_PORT: String(port),
      DOMAIN_CACHE_MS: '0',
    });
    await runMigrations({ ...api.config, DATABASE_URL: euPostgres.url });
    workers.push(await startWorker({ ...api.config }));
    usDb = new Client({ connectionString: api.config.DATABASE_URL });
    await usDb.connect();
    await usDb.query(`SET search_path TO "${api.config.DATABASE_SCHEMA}"`);
    us = await api.team({ region: 'us-east-1' });
    eu = await api.team({ region: 'us-east-1', domainRegion: 'eu-west-1' });
    await verifiedUser(api, 'owner@people.test', 'owner password 1');
    const client = await new DashboardClient(api.url).start();
    expect((await client.auth('/sign-in/email', { email: 'owner@people.test', password: 'owner password 1' })).status).toBe(200);
    const teamId: string = (await client.get('/dashboard/api/me')).body.teams[0].id;
    for (const [name, region] of [
      ['both-us.test', 'us-east-1'],
      ['both-eu.test', 'eu-west-1'],
    ]) {
      const domain = await client.post(`/dashboard/api/teams/${teamId}/domains`, { name, region });
      expect(domain.status).toBe(201);
      await markVerified(api.app.get(DomainsRepository), domain.body.id);
    }
    const key = await client.post(`/dashboard/api/teams/${teamId}/api-keys`, { name: 'both', permission: 'full_access' });
    both = { client, teamId, token: key.body.token };
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(workers.map((worker) => worker.close()));
    await usDb?.end();
    await api?.close();
    await sink?.close();
    await dns?.close();
    await euPostgres?.stop();
  }, 60_000);

  let n = 0;
  const send = async (team: TestTeam) => {
    const subject = `${team === us ? 'us' : 'eu'} #${++n}#`;
    const r = await call(api.url, team.token, 'POST', '/emails', { from: team.from(), to: 'ana@inbox.test', subject, text: 'hi' });
    return { ...r, subject };
  };
  const received = (subject: string) => sink.messages.filter((m) => m.raw.toString().includes(`Subject: ${subject}`)).length;

  it("serves us-east-1's domains, refuses eu-west-1's with 503 while its Postgres is down, and delivers what it accepted once after", async () => {
    // eu-west-1's worker is not running yet: what its region accepts waits in its database and stream.
    const accepted = [await send(eu), await send(eu), await send(eu)];
    expect(accepted.map((s) => s.status)).toEqual([200, 200, 200]);
    const euDb = new Client({ connectionString: euPostgres.url });
    await euDb.connect();
    await euDb.query(`SET search_path TO "${api.config.DATABASE_SCHEMA}"`);
    expect((await euDb.query(`SELECT count(*)::int AS n FROM emails WHERE id = ANY($1::uuid[])`, [accepted.map((s) => s.body.id)])).rows[0].n).toBe(
      3,
    );
    await euDb.end();

    const bothSent: string[] = [];
    for (const from of ['shop@both-us.test', 'shop@both-eu.test']) {
      const r = await call(api.url, both.token, 'POST', '/emails', { from, to: 'ana@inbox.test', subject: `both #${++n}#`, text: 'hi' });
      expect(r.status).toBe(200);
      bothSent.push(r.body.id);
    }
    const feed = () => both.client.get(`/dashboard/api/teams/${both.teamId}/emails`);
    expect((await feed()).body).toMatchObject({ unavailable_regions: [], data: [{ id: bothSent[1] }, { id: bothSent[0] }] });

    await euPostgres.kill();
    const during: Awaited<ReturnType<typeof send>>[] = [];
    for (let i = 0; i < 10; i++) during.push(await send(us));
    expect(during.map((s) => s.status)).toEqual(new Array(10).fill(200));
    const refused = [await send(eu), await send(eu)];
    for (const r of refused) {
      expect({ status: r.status, name: r.body.name, retryAfter: r.headers.get('retry-after') }).toEqual({
        status: 503,
        name: 'service_unavailable',
        retryAfter: '1',
      });
    }
    // The second refusal came at once: the first failed connection marked eu-west-1's database down until a probe reaches it.
    expect(refused[1].body.message).toMatch(/^The database of region eu-west-1 cannot be reached right now/);
    // The dashboard's feed shows what it can and names the region it cannot; GET /emails, which an
    // API client pages through, refuses rather than skip eu-west-1's emails without a word.
    expect((await feed()).body).toMatchObject({ unavailable_regions: ['eu-west-1'], data: [{ id: bothSent[0] }] });
    expect((await feed()).body.data).toHaveLength(1);
    const listed = await call(api.url, both.token, 'GET', '/emails');
    expect({ status: listed.status, name: listed.body.name, retryAfter: listed.headers.get('retry-after') }).toEqual({
      status: 503,
      name: 'service_unavailable',
      retryAfter: '1',
    });
    expect((await call(api.url, both.token, 'GET', `/emails/${bothSent[0]}`)).status).toBe(200);
    expect((await call(api.url, both.token, 'GET', `/emails/${bothSent[1]}`)).status).toBe(503);
    await waitFor(
      async () =>
        (
          await usDb.query(`SELECT count(*)::int AS n FROM emails WHERE id = ANY($1::uuid[]) AND last_event = 'delivered'`, [
            during.map((s) => s.body.id),
          ])
        ).rows[0].n === during.length,
      "us-east-1's emails to be delivered during eu-west-1's outage",
    );

    await euPostgres.restart();
    workers.push(
      await startWorker({
        ...api.config,
        HERALD_REGION: 'eu-west-1',
        DATABASE_URL: euPostgres.url,
        CONTROL_DATABASE_URL: api.config.DATABASE_URL,
        REGION_DATABASE_URLS: { 'us-east-1': api.config.DATABASE_URL },
      }),
    );
    await waitFor(async () => accepted.every((s) => received(s.subject) === 1), 'the emails accepted before the outage to be delivered', 60_000);
    let again = await send(eu);
    for (let i = 0; again.status === 503 && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 250));
      again = await send(eu);
    }
    expect(again.status).toBe(200);
    expect((await feed()).body).toMatchObject({
      unavailable_regions: [],
      data: expect.arrayContaining([expect.objectContaining({ id: bothSent[1] })]),
    });
    await waitFor(async () => received(again.subject) === 1, 'a send after the outage to be delivered');
    await new Promise((r) => setTimeout(r, 1_000));
    for (const s of [...accepted, ...during, again])
      expect({ subject: s.subject, received: received(s.subject) }).toEqual({ subject: s.subject, received: 1 });
    for (const r of refused) expect(received(r.subject)).toBe(0);
  });
});
