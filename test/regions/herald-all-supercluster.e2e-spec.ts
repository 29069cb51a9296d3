import { Client } from 'pg';
import { freeSharedPort, isolatedConfig, IsolatedConfig, MxSink, startSupercluster, Supercluster, TestDnsServer } from '@herald/testing';
import { Running, startHeraldAll, waitFor } from '../support/herald-all';
import { envOf } from '../support/herald-process';

const SINK_HOST = '127.0.0.42';

interface Connz {
  connections?: { name?: string }[];
}

/**
 * `herald all --regions us-east-1,eu-west-1` for development on a private two-region NATS
 * supercluster (one node each), configured as deploy/local/supercluster.sh prints it: the api and
 * smtp on us-east-1's server, each region's worker and webhooks on its own region's server, each
 * region's streams placed there. A new eu-west-1 domain's email is delivered to a real MX sink.
 */
describe('herald all on a NATS supercluster', () => {
  let cluster: Supercluster;
  let isolated: IsolatedConfig;
  let dns: TestDnsServer;
  let sink: MxSink;
  let db: Client;
  let herald: Running;

  beforeAll(async () => {
    cluster = await startSupercluster({ regions: [{ name: 'us-east-1' }, { name: 'eu-west-1' }] });
    isolated = await isolatedConfig({ NATS_URL: cluster.urls('us-east-1').join(',') });
    dns = await TestDnsServer.start();
    const port = await freeSharedPort([SINK_HOST]);
    sink = await MxSink.start({ host: SINK_HOST, port });
    dns.set('inbox.test', 'MX', [{ exchange: 'mx.inbox.test', priority: 10 }]).set('mx.inbox.test', 'A', [SINK_HOST]);
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${isolated.config.DATABASE_SCHEMA}"`);
    herald = await startHeraldAll(
      ['--regions', 'us-east-1,eu-west-1'],
      envOf(isolated.config, {
        HERALD_REGIONS: '',
        NATS_PLACE_BY_REGION: 'true',
        NATS_REGION_URLS: `us-east-1=${cluster.urls('us-east-1').join('|')},eu-west-1=${cluster.urls('eu-west-1').join('|')}`,
        DNS_SERVERS: dns.address(),
        DELIVERY_PORT: String(port),
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await herald?.stop();
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

  it("delivers a new eu-west-1 domain's email from eu-west-1's stream", async () => {
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${herald.boot.api_url}${path}`, {
        method,
        headers: { authorization: `Bearer ${herald.boot.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const created = await call('POST', '/domains', { name: 'eu.supercluster.test', region: 'eu-west-1' });
    expect(created.status).toBe(200);
    await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [created.body.id]);
    const sent = await call('POST', '/emails', { from: 'hello@eu.supercluster.test', to: 'li@inbox.test', subject: 'Placed in Europe', text: 'hi' });
    expect(sent.status).toBe(200);
    await sink.waitForMessages(1, 20_000);
    expect(sink.messages[0].raw.toString()).toContain('Subject: Placed in Europe');
    await waitFor(
      async () => (await db.query(`SELECT last_event FROM emails WHERE id = $1`, [sent.body.id])).rows[0]?.last_event === 'delivered',
      'the email to be recorded as delivered',
    );
    const jsz = (await (await fetch(`${cluster.nodes.find((n) => n.region === 'eu-west-1')!.monitorUrl}/jsz?streams=true&accounts=true`)).json()) as {
      account_details?: { stream_detail?: { name: string; state: { last_seq: number } }[] }[];
    };
    const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []).map((s) => s.name);
    // Only eu-west-1's streams are on eu-west-1's server.
    const ns = isolated.config.NATS_NAMESPACE.toUpperCase();
    expect(streams.filter((name) => name.startsWith(`${ns}_`)).sort()).toEqual([
      `${ns}_EVENTS_EU_WEST_1`,
      `${ns}_SEND_EU_WEST_1`,
      `${ns}_TRACKING_EU_WEST_1`,
    ]);
  });
});
