import { Client } from 'pg';
import { regionOfId } from '@herald/core';
import { isolatedConfig, IsolatedConfig, MxSink, startSupercluster, Supercluster, TestDnsServer } from '@herald/testing';
import { Running, startHeraldAll, waitFor } from '../support/herald-all';
import { envOf } from '../support/herald-process';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.42';

interface Connz {
  connections?: { name?: string }[];
}

/**
 * `herald all --regions us-east-1,eu-west-1` for development on a private two-region NATS
 * supercluster (one node each), configured as deploy/local/supercluster.sh prints it: the api and
 * smtp on us-east-1's server, each region's worker and webhooks on its own region's server, each
 * region's streams placed there. Each region's email plane is in a database of its own: the
 * control plane and us-east-1's in DATABASE_URL's (the suite's isolated schema, migrated before),
 * eu-west-1's in a second database named by REGION_DATABASE_URLS, made empty here and migrated by
 * `herald all` as it boots. A us-east-1 domain's email and a new eu-west-1 domain's are each
 * stored in their own region's database only and delivered to a real MX sink.
 */
describe('herald all on a NATS supercluster, with eu-west-1 in a database of its own', () => {
  const euDatabase = `herald_all_eu_${process.pid}`;
  let euUrl: string;
  let cluster: Supercluster;
  let isolated: IsolatedConfig;
  let dns: TestDnsServer;
  let sink: MxSink;
  /** The control plane's and us-east-1's email plane's database (DATABASE_URL). */
  let db: Client;
  /** eu-west-1's email plane's database. */
  let euDb: Client;
  let herald: Running;

  beforeAll(async () => {
    cluster = await startSupercluster({ regions: [{ name: 'us-east-1' }, { name: 'eu-west-1' }] });
    isolated = await isolatedConfig({ NATS_URL: cluster.urls('us-east-1').join(',') });
    const inbox = await startInbox(SINK_HOST);
    ({ dns, sink } = inbox);
    const { port } = inbox;
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${isolated.config.DATABASE_SCHEMA}"`);
    await db.query(`DROP DATABASE IF EXISTS ${euDatabase} WITH (FORCE)`);
    await db.query(`CREATE DATABASE ${euDatabase}`);
    const url = new URL(isolated.config.DATABASE_URL);
    url.pathname = `/${euDatabase}`;
    euUrl = url.href;
    herald = await startHeraldAll(
      ['--regions', 'us-east-1,eu-west-1'],
      envOf(isolated.config, {
        HERALD_REGIONS: '',
        NATS_PLACE_BY_REGION: 'true',
        NATS_REGION_URLS: `us-east-1=${cluster.urls('us-east-1').join('|')},eu-west-1=${cluster.urls('eu-west-1').join('|')}`,
        DNS_SERVERS: dns.address(),
        DELIVERY_PORT: String(port),
        REGION_DATABASE_URLS: `eu-west-1=${euUrl}`,
      }),
    );
    // Open once herald all has made the schema in it.
    euDb = new Client({ connectionString: euUrl });
    await euDb.connect();
    await euDb.query(`SET search_path TO "${isolated.config.DATABASE_SCHEMA}"`);
  }, 120_000);

  afterAll(async () => {
    await herald?.stop();
    await euDb?.end();
    await db?.query(`DROP DATABASE IF EXISTS ${euDatabase} WITH (FORCE)`);
    await db?.end();
    await sink?.close();
    await dns?.close();
    // The streams were made on the private supercluster, gone with it.
    await isolated?.cleanup().catch(() => undefined);
    await cluster?.stop();
  }, 60_000);

  /** The names of Herald's connections to each region's server (`herald-<region of the role>`). */
  const connectionsByServer = async () =>
    Object.fromEntries(
      await Promise.all(
        cluster.nodes.map(async (node) => {
          const connz = (await (await fetch(`${node.monitorUrl}/connz`)).json()) as Connz;
          const names = (connz.connections ?? []).map((c) => c.name ?? '').filter((n) => n.startsWith('herald-'));
          return [node.region, names.sort()];
        }),
      ),
    );

  it("connects each region's worker, webhooks and metrics consumer to that region's server", async () => {
    expect(await connectionsByServer()).toEqual({
      // api, smtp, and us-east-1's worker, webhooks and metrics
      'us-east-1': new Array(5).fill('herald-us-east-1'),
      'eu-west-1': new Array(3).fill('herald-eu-west-1'),
    });
  });

  it('migrates both databases as it boots, and says which holds what', async () => {
    const applied = async (client: Client) => (await client.query(`SELECT name FROM herald_migrations ORDER BY id`)).rows.map((r) => r.name);
    expect(herald.boot.migrations).toEqual([
      // Migrated before it started (isolatedConfig): nothing left to apply.
      { database: isolated.config.DATABASE_URL, holds: ['control', 'us-east-1'], applied: [] },
      // Empty before it started: every migration, the whole schema, applied here.
      { database: euUrl, holds: ['eu-west-1'], applied: await applied(euDb) },
    ]);
    expect(herald.boot.migrations[1].applied).toEqual(await applied(db));
  });

  it("stores each domain's email only in its region's database, delivers both, and GET /emails/:id finds both", async () => {
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${herald.boot.api_url}${path}`, {
        method,
        headers: { authorization: `Bearer ${herald.boot.api_key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const domains = { 'us-east-1': 'us.supercluster.test', 'eu-west-1': 'eu.supercluster.test' };
    for (const [region, name] of Object.entries(domains)) {
      const created = await call('POST', '/domains', { name, region });
      expect({ name, status: created.status, region: created.body.region }).toEqual({ name, status: 200, region });
      // Domains are the control plane's, in DATABASE_URL's database.
      await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [created.body.id]);
    }
    const sendFrom = async (name: string, subject: string) => {
      const sent = await call('POST', '/emails', { from: `hello@${name}`, to: 'li@inbox.test', subject, text: 'hi' });
      expect({ subject, status: sent.status }).toEqual({ subject, status: 200 });
      return sent.body.id as string;
    };
    const us = await sendFrom(domains['us-east-1'], 'Placed in America');
    const eu = await sendFrom(domains['eu-west-1'], 'Placed in Europe');
    expect([regionOfId(us, herald.boot.regions), regionOfId(eu, herald.boot.regions)]).toEqual(['us-east-1', 'eu-west-1']);

    await sink.waitForMessages(2, 20_000);
    for (const subject of ['Placed in America', 'Placed in Europe'])
      expect({ subject, delivered: sink.messages.filter((m) => m.raw.toString().includes(`Subject: ${subject}`)).length }).toEqual({
        subject,
        delivered: 1,
      });
    const lastEvent = async (client: Client, id: string) =>
      (await client.query(`SELECT last_event FROM emails WHERE id = $1`, [id])).rows[0]?.last_event;
    await waitFor(
      async () => (await lastEvent(db, us)) === 'delivered' && (await lastEvent(euDb, eu)) === 'delivered',
      "both emails to be recorded as delivered, each in its region's database",
    );

    // Each email, its recipients and its events in its own region's database, none in the other's.
    const count = async (client: Client, table: string, column: string, id: string) =>
      (await client.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [id])).rows[0].n as number;
    for (const [table, column] of [
      ['emails', 'id'],
      ['email_recipients', 'email_id'],
      ['email_events', 'email_id'],
    ]) {
      const where = async (id: string) => ({ first: await count(db, table, column, id), eu: await count(euDb, table, column, id) });
      const [ofUs, ofEu] = [await where(us), await where(eu)];
      expect({ table, us: [ofUs.first > 0, ofUs.eu], eu: [ofEu.first, ofEu.eu > 0] }).toEqual({ table, us: [true, 0], eu: [0, true] });
    }

    // GET /emails/:id finds each, reading the region its id names.
    for (const [id, from, subject] of [
      [us, `hello@${domains['us-east-1']}`, 'Placed in America'],
      [eu, `hello@${domains['eu-west-1']}`, 'Placed in Europe'],
    ]) {
      const got = await call('GET', `/emails/${id}`);
      expect({ status: got.status, id: got.body.id, from: got.body.from, subject: got.body.subject, last_event: got.body.last_event }).toEqual({
        status: 200,
        id,
        from,
        subject,
        last_event: 'delivered',
      });
    }

    const jsz = (await (await fetch(`${cluster.nodes.find((n) => n.region === 'eu-west-1')!.monitorUrl}/jsz?streams=true&accounts=true`)).json()) as {
      account_details?: { stream_detail?: { name: string; state: { last_seq: number } }[] }[];
    };
    const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []).map((s) => s.name);
    // Only eu-west-1's streams are on eu-west-1's server: its email was taken from there.
    const ns = isolated.config.NATS_NAMESPACE.toUpperCase();
    expect(streams.filter((name) => name.startsWith(`${ns}_`)).sort()).toEqual([
      `${ns}_EVENTS_EU_WEST_1`,
      `${ns}_SEND_EU_WEST_1`,
      `${ns}_TRACKING_EU_WEST_1`,
    ]);
  });
});
