import type { INestApplicationContext } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { sendStreamName } from '@herald/bus';
import { OpsServer } from '@herald/observability';
import { MxSink, startSupercluster, Supercluster, TestDnsServer } from '@herald/testing';
import { ApiApp, startApi } from '../../apps/api/src/api.app';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { SENDERS_DURABLE, startWorker } from '../../apps/worker/src/worker.app';
import { call, startTestApi, TestApi } from '../support/api-harness';
import { waitFor } from '../support/herald-all';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.46';
/** What a booting role may take with the other region down (a boot on an idle machine takes 1 to 3 s). */
const BOOT_BOUND_MS = 15_000;

/**
 * Issue 15, item 4, a role (re)started during the outage. With two regions of one NATS server
 * each, losing eu-west-1's server loses the JetStream meta group's quorum (one of two peers):
 * nothing in the supercluster can create or change a stream or a consumer until it returns, and
 * every JetStream API request that only the meta leader answers (account info, stream names)
 * fails with 10008. us-east-1's streams and consumers still answer their own info, publishes and
 * pulls. A us-east-1 API, worker and webhooks role booted now, after a first generation made
 * every stream and consumer, must come up on what exists: the worker with a changed consumer
 * setting (DELIVERY_CONCURRENCY → max_ack_pending) too, carrying on with the consumer as it is.
 */
describe('a region down: roles of the other region booting during the outage', () => {
  let cluster: Supercluster;
  let api: TestApi;
  const started: { close(): Promise<void> }[] = [];
  let dns: TestDnsServer;
  let sink: MxSink;
  let db: Client;

  beforeAll(async () => {
    cluster = await startSupercluster({ regions: [{ name: 'us-east-1' }, { name: 'eu-west-1' }] });
    const inbox = await startInbox(SINK_HOST);
    ({ dns, sink } = inbox);
    const { port } = inbox;
    // The first generation of us-east-1's roles: it makes both regions' streams and us-east-1's consumers.
    api = await startTestApi({
      HERALD_REGION: 'us-east-1',
      HERALD_REGIONS: 'us-east-1,eu-west-1',
      NATS_URL: cluster.urls('us-east-1').join(','),
      NATS_PLACE_BY_REGION: 'true',
      DNS_SERVERS: dns.address(),
      DELIVERY_PORT: String(port),
      DOMAIN_CACHE_MS: '0',
    });
    db = new Client({ connectionString: api.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${api.config.DATABASE_SCHEMA}"`);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(started.reverse().map((role) => role.close()));
    await db?.end();
    // Its cleanup ends by deleting the test's streams, which a leaderless meta group refuses:
    // they go with the private supercluster; the schema and Redis keys are cleaned up before that.
    await api?.close().catch((error: Error) => {
      if (!/JetStream system temporarily unavailable/.test(error.message)) throw error;
    });
    await sink?.close();
    await dns?.close();
    await cluster?.stop();
  }, 60_000);

  const delivered = async (ids: string[]) =>
    (await db.query(`SELECT count(*)::int AS n FROM emails WHERE id = ANY($1::uuid[]) AND last_event = 'delivered'`, [ids])).rows[0].n === ids.length;
  const ready = async (url: string) => (await fetch(`${url}/health/ready`)).status === 200;
  const opsUrl = (app: INestApplicationContext) => `http://127.0.0.1:${app.get(OpsServer).port()}`;
  const timed = async <T>(boot: () => Promise<T>): Promise<[T, number]> => {
    const startedAt = performance.now();
    const role = await boot();
    return [role, performance.now() - startedAt];
  };
  const metaLeaders = async () =>
    Promise.all(
      cluster.nodes
        .filter((node) => node.region === 'us-east-1')
        .map(
          async (node) =>
            ((await (await fetch(`${node.monitorUrl}/jsz`)).json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader ?? '',
        ),
    );

  it("boots a fresh API, worker and webhooks role that deliver us-east-1's mail and refuse eu-west-1's with 503", async () => {
    const us = await api.team({ region: 'us-east-1' });
    const eu = await api.team({ region: 'us-east-1', domainRegion: 'eu-west-1' });
    const workerConfig = { ...api.config, NATS_URL: cluster.urls('us-east-1') };
    for (const boot of [() => startWorker(workerConfig), () => startWebhooks(workerConfig)]) {
      const role = await boot();
      await role.close();
    }

    await cluster.stopRegion('eu-west-1');
    // Until us-east-1's server has given up on the meta leader it had (it may have been eu-west-1's).
    await waitFor(async () => (await metaLeaders()).every((leader) => leader === ''), 'the meta group to lose its leader', 20_000);

    const [fresh, apiMs] = await timed(() => startApi(api.config));
    started.push(fresh);
    const concurrency = api.config.DELIVERY_CONCURRENCY + 1;
    const [worker, workerMs] = await timed(() => startWorker({ ...workerConfig, DELIVERY_CONCURRENCY: concurrency }));
    started.push(worker);
    const [webhooks, webhooksMs] = await timed(() => startWebhooks(workerConfig));
    started.push(webhooks);
    for (const ms of [apiMs, workerMs, webhooksMs]) expect(ms).toBeLessThan(BOOT_BOUND_MS);
    await waitFor(() => ready(fresh.url), 'the fresh API to be ready', 10_000);
    await waitFor(() => ready(opsUrl(worker)), 'the fresh worker to be ready', 10_000);
    await waitFor(() => ready(opsUrl(webhooks)), 'the fresh webhooks role to be ready', 10_000);

    // The worker's consumer kept its settings: changing them needs the meta leader.
    const nc = await connect({ servers: cluster.urls('us-east-1') });
    try {
      const jsm = await jetstreamManager(nc, { checkAPI: false });
      const consumer = await jsm.consumers.info(sendStreamName(api.config.NATS_NAMESPACE, 'us-east-1'), SENDERS_DURABLE);
      expect(consumer.config.max_ack_pending).toBe(api.config.DELIVERY_CONCURRENCY);
    } finally {
      await nc.close();
    }

    const send = (app: ApiApp, team: typeof us, subject: string) =>
      call(app.url, team.token, 'POST', '/emails', { from: team.from(), to: 'ana@inbox.test', subject, text: 'hi' });
    const sent = await send(fresh, us, 'us during the outage');
    expect(sent.status).toBe(200);
    await waitFor(() => delivered([sent.body.id]), "the fresh roles to deliver us-east-1's email", 20_000);
    expect(sink.messages.filter((m) => m.raw.toString().includes('Subject: us during the outage'))).toHaveLength(1);

    // eu-west-1's streams did not answer at boot: its sends are refused from the first one.
    const refused = await send(fresh, eu, 'eu during the outage');
    expect({ status: refused.status, name: refused.body.name, retryAfter: refused.headers.get('retry-after') }).toEqual({
      status: 503,
      name: 'service_unavailable',
      retryAfter: '1',
    });
    expect((await db.query(`SELECT count(*)::int AS n FROM emails WHERE subject = 'eu during the outage'`)).rows).toEqual([{ n: 0 }]);
    console.log(
      `booted during eu-west-1's outage: api ${apiMs.toFixed(0)} ms, worker ${workerMs.toFixed(0)} ms, webhooks ${webhooksMs.toFixed(0)} ms`,
    );
  }, 90_000);
});
