import type { INestApplicationContext } from '@nestjs/common';
import { jetstream, jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { eventsStreamName, NatsService, RegionAvailability, sendStreamName, sendSubject, StreamsService } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { MxSink, startSupercluster, Supercluster, TestDnsServer } from '@herald/testing';
import { startWorker } from '../../apps/worker/src/worker.app';
import { call, startTestApi, TestApi } from '../support/api-harness';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.41';
const REGIONS = ['us-east-1', 'eu-west-1'] as const;

/**
 * Two regions on a private NATS supercluster (never the machine's shared NATS): us-east-1 a
 * cluster of three nodes (its streams R3), eu-west-1 one node, joined by gateways that pass
 * through delay proxies. Herald's bus places each region's streams on its region's servers; the
 * API runs in us-east-1 only and the worker in eu-west-1 only, so an eu-west-1 email accepted in
 * us-east-1 crosses the gateway to eu-west-1's stream and is delivered by eu-west-1's worker to a
 * real MX sink. Postgres and Redis are still the machine's shared ones (issue 15, item 2 is later).
 */
describe('regions on a NATS supercluster', () => {
  let cluster: Supercluster;
  let api: TestApi;
  let euWorker: INestApplicationContext;
  let dns: TestDnsServer;
  let sink: MxSink;
  let db: Client;
  const connections: NatsConnection[] = [];

  beforeAll(async () => {
    cluster = await startSupercluster({
      regions: [
        { name: 'us-east-1', nodes: 3 },
        { name: 'eu-west-1', nodes: 1 },
      ],
      gatewayLatencyMs: 0,
    });
    const inbox = await startInbox(SINK_HOST);
    ({ dns, sink } = inbox);
    const { port } = inbox;
    api = await startTestApi({
      HERALD_REGION: 'us-east-1',
      HERALD_REGIONS: REGIONS.join(','),
      NATS_URL: cluster.urls('us-east-1').join(','),
      NATS_PLACE_BY_REGION: 'true',
      NATS_REGION_REPLICAS: 'us-east-1=3',
      DNS_SERVERS: dns.address(),
      DELIVERY_PORT: String(port),
      DOMAIN_CACHE_MS: '0',
    });
    euWorker = await startWorker({ ...api.config, HERALD_REGION: 'eu-west-1', NATS_URL: cluster.urls('eu-west-1') });
    db = new Client({ connectionString: api.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${api.config.DATABASE_SCHEMA}"`);
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(connections.map((nc) => nc.close()));
    await euWorker?.close();
    await db?.end();
    await api?.close();
    await sink?.close();
    await dns?.close();
    await cluster?.stop();
  }, 60_000);

  const natsAt = async (region: string): Promise<NatsConnection> => {
    const nc = await connect({ servers: cluster.urls(region), noAsyncTraces: true });
    connections.push(nc);
    return nc;
  };
  const jsmAt = async (region: string): Promise<JetStreamManager> => jetstreamManager(await natsAt(region));

  it("places each region's send and events streams on its own region's servers", async () => {
    const jsm = await jsmAt('eu-west-1');
    const ns = api.config.NATS_NAMESPACE;
    const placed: Record<string, { cluster?: string; servers: string[] }> = {};
    for (const region of REGIONS) {
      for (const name of [sendStreamName(ns, region), eventsStreamName(ns, region)]) {
        const info = await jsm.streams.info(name);
        const servers = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter(Boolean) as string[];
        placed[name] = { cluster: info.cluster?.name, servers: servers.sort() };
      }
    }
    const us = { cluster: 'us-east-1', servers: ['us-east-1-1', 'us-east-1-2', 'us-east-1-3'] };
    const eu = { cluster: 'eu-west-1', servers: ['eu-west-1-1'] };
    expect(placed).toEqual({
      [sendStreamName(ns, 'us-east-1')]: us,
      [eventsStreamName(ns, 'us-east-1')]: us,
      [sendStreamName(ns, 'eu-west-1')]: eu,
      [eventsStreamName(ns, 'eu-west-1')]: eu,
    });
  });

  it("delivers an eu-west-1 email accepted by us-east-1's API through eu-west-1's stream and worker", async () => {
    const team = await api.team({ region: 'us-east-1', domainRegion: 'eu-west-1' });
    const sent = await call(api.url, team.token, 'POST', '/emails', {
      from: team.from(),
      to: 'ana@inbox.test',
      subject: 'Across the gateway',
      text: 'hi',
    });
    expect(sent.status).toBe(200);
    await sink.waitForMessages(1, 20_000);
    expect(sink.messages[0].raw.toString()).toContain('Subject: Across the gateway');
    await waitFor(async () => (await db.query(`SELECT last_event FROM emails WHERE id = $1`, [sent.body.id])).rows[0]?.last_event === 'delivered');
    // The send command went to eu-west-1's stream (on eu-west-1's server), never to us-east-1's.
    const jsm = await jsmAt('eu-west-1');
    const ns = api.config.NATS_NAMESPACE;
    expect((await jsm.streams.info(sendStreamName(ns, 'eu-west-1'))).state.last_seq).toBeGreaterThanOrEqual(1);
    expect((await jsm.streams.info(sendStreamName(ns, 'us-east-1'))).state.last_seq).toBe(0);
    expect((await db.query(`SELECT region FROM emails WHERE id = $1`, [sent.body.id])).rows).toEqual([{ region: 'eu-west-1' }]);
  });

  it("moves a region's streams made before placement was turned on to the region's servers", async () => {
    const namespace = `${api.config.NATS_NAMESPACE}_moved`;
    const ensure = async (overrides: Partial<HeraldConfig>) => {
      const config: HeraldConfig = { ...api.config, NATS_NAMESPACE: namespace, ...overrides };
      const nats = new NatsService(config);
      try {
        await new StreamsService(config, nats, new RegionAvailability(config, nats)).ensureStreams();
      } finally {
        await nats.drain();
      }
    };
    const jsm = await jsmAt('us-east-1');
    const where = async () =>
      Object.fromEntries(
        await Promise.all(
          REGIONS.map(async (region) => {
            const info = await jsm.streams.info(sendStreamName(namespace, region));
            return [region, { cluster: info.cluster?.name, replicas: 1 + (info.cluster?.replicas?.length ?? 0) }];
          }),
        ),
      );
    // An earlier release, unplaced and R1: both regions' streams where the request landed (us-east-1).
    await ensure({ NATS_PLACE_BY_REGION: false, NATS_REGION_REPLICAS: {} });
    expect(await where()).toEqual({ 'us-east-1': { cluster: 'us-east-1', replicas: 1 }, 'eu-west-1': { cluster: 'us-east-1', replicas: 1 } });
    await ensure({});
    const placed = { 'us-east-1': { cluster: 'us-east-1', replicas: 3 }, 'eu-west-1': { cluster: 'eu-west-1', replicas: 1 } };
    await waitFor(async () => JSON.stringify(await where()) === JSON.stringify(placed));
    for (const region of REGIONS) {
      for (const name of [sendStreamName(namespace, region), eventsStreamName(namespace, region)]) await jsm.streams.delete(name);
    }
  });

  it("leaves a stream an earlier release placed in its region's cluster where it is", async () => {
    const config: HeraldConfig = { ...api.config, NATS_NAMESPACE: `${api.config.NATS_NAMESPACE}_old` };
    const nats = new NatsService(config);
    const streams = new StreamsService(config, nats, new RegionAvailability(config, nats));
    const jsm = await jsmAt('us-east-1');
    try {
      // As the earlier release made them: placement by the cluster named after the region.
      for (const desired of streams.desiredStreams()) {
        const region = desired.placement!.tags[0].replace('region:', '');
        await jsm.streams.add({ ...desired, placement: { cluster: region, tags: [] } });
      }
      await streams.ensureStreams();
      for (const region of REGIONS) {
        const info = await jsm.streams.info(sendStreamName(config.NATS_NAMESPACE, region));
        expect({ placement: info.config.placement, cluster: info.cluster?.name }).toEqual({ placement: { cluster: region }, cluster: region });
      }
    } finally {
      await nats.drain();
      for (const desired of streams.desiredStreams()) await jsm.streams.delete(desired.name).catch(() => undefined);
    }
  });

  it('takes one gateway round trip longer to publish to the other region once the regions are 50 ms apart', async () => {
    const js = jetstream(await natsAt('us-east-1'));
    const subject = sendSubject(api.config.NATS_NAMESPACE, 'eu-west-1');
    // `send.email.probe`: captured by the stream, outside the worker's filter (`send.email`); purged after.
    const timePublishes = async (count: number) => {
      const took: number[] = [];
      for (let i = 0; i < count; i++) {
        const start = performance.now();
        await js.publish(`${subject}.probe`, '{}', { msgID: `probe-${Date.now()}-${i}` });
        took.push(performance.now() - start);
      }
      return took.sort((a, b) => a - b)[Math.floor(count / 2)];
    };
    const near = await timePublishes(20);
    cluster.setGatewayLatency(50);
    const far = await timePublishes(20);
    cluster.setGatewayLatency(0);
    await (await jsmAt('eu-west-1')).streams.purge(sendStreamName(api.config.NATS_NAMESPACE, 'eu-west-1'));
    console.log(
      `publish from us-east-1 to eu-west-1's stream, p50 of 20 (shared machine): ${near.toFixed(1)} ms without delay, ${far.toFixed(1)} ms with 50 ms each way on the gateways`,
    );
    // Out over the gateway and the ack back: at least one round trip of 100 ms.
    expect(far).toBeGreaterThanOrEqual(100);
    expect(near).toBeLessThan(50);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
