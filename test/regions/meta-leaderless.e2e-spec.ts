import { AckPolicy, jetstream, jetstreamManager, JetStreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { startSupercluster, Supercluster } from '@herald/testing';
import { waitFor } from '../support/herald-all';

/**
 * What nats-server 2.9 still does when the JetStream meta group of a supercluster has no leader:
 * two regions of one server each (the development and test layout), the second region's server
 * killed, so the meta group has one peer of two up and cannot elect a leader. What Herald's boot
 * may rely on then (libs/bus streams.service.ts, jetstream.consumer.ts) and deploy/README.md
 * states are these answers. Requests go to the surviving region's server, through the clients
 * Herald uses. Then the same loss with a third region of one server as a tie-breaker: the meta
 * group keeps a majority (two of three) and everything works.
 */
describe("a supercluster's JetStream meta group with one region down", () => {
  let cluster: Supercluster;
  let nc: NatsConnection;

  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  }, 30_000);

  it("answers the surviving region's stream and consumer info, publishes and pulls; refuses every change and what only the meta leader answers", async () => {
    cluster = await startSupercluster({ regions: [{ name: 'a' }, { name: 'b' }] });
    const place = (region: string) => ({ cluster: '', tags: [`region:${region}`] });
    const stream = (name: string, region: string) => ({
      name,
      subjects: [`${region}.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: 1,
      placement: place(region),
    });
    const consumer = { durable_name: 'workers', ack_policy: AckPolicy.Explicit, filter_subject: 'a.send', max_ack_pending: 32 };
    const before = await connect({ servers: cluster.urls('a') });
    const setup = await jetstreamManager(before);
    await setup.streams.add(stream('SA', 'a'));
    await setup.streams.add(stream('SB', 'b'));
    await setup.consumers.add('SA', consumer);
    await jetstream(before).publish('a.send', 'before');
    await before.close();

    await cluster.stopRegion('b');
    const [a] = cluster.nodes;
    const leader = async () => ((await (await fetch(`${a!.monitorUrl}/jsz`)).json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader;
    await waitFor(async () => !(await leader()), 'the meta group to lose its leader', 20_000);

    nc = await connect({ servers: cluster.urls('a') });
    const outcome = async (work: () => Promise<unknown>) =>
      work().then(
        () => 'ok',
        (error: Error & { code?: number }) => (error.name === 'TimeoutError' ? 'timeout' : `${error.code ?? error.name}`),
      );
    // For its first seconds without a leader (longer on a loaded machine), the server lets a meta
    // request time out rather than refuse it: the table is of the state it settles in.
    await waitFor(async () => (await outcome(() => jetstreamManager(nc, { timeout: 3_000 }))) === '10008', 'account info refused with 10008', 40_000);
    const jsm: JetStreamManager = await jetstreamManager(nc, { checkAPI: false, timeout: 3_000 });
    const js = jetstream(nc, { timeout: 3_000 });
    const fetched: string[] = [];
    const answers = {
      'account info (the client checks JetStream with it by default)': await outcome(() => jetstreamManager(nc, { timeout: 3_000 })),
      "stream info, the surviving region's stream": await outcome(() => jsm.streams.info('SA')),
      "stream info, the lost region's stream": await outcome(() => jsm.streams.info('SB')),
      'stream names': await outcome(async () => {
        for await (const _ of jsm.streams.names());
      }),
      'consumer info': await outcome(() => jsm.consumers.info('SA', 'workers')),
      'publish to the surviving stream': await outcome(() => js.publish('a.send', 'during')),
      'pull from its durable consumer': await outcome(async () => {
        const messages = await (await js.consumers.get('SA', 'workers')).fetch({ max_messages: 2, expires: 2_000 });
        for await (const m of messages) {
          fetched.push(m.string());
          m.ack();
        }
      }),
      'stream add, identical to the existing one': await outcome(() => jsm.streams.add(stream('SA', 'a'))),
      'stream add, a new one': await outcome(() => jsm.streams.add(stream('SC', 'a'))),
      'stream update': await outcome(() => jsm.streams.update('SA', { ...stream('SA', 'a'), max_age: 3600e9 })),
      'consumer add, identical to the existing one': await outcome(() => jsm.consumers.add('SA', consumer)),
      'consumer add, a new one': await outcome(() => jsm.consumers.add('SA', { ...consumer, durable_name: 'others', filter_subject: 'a.other' })),
      'consumer update': await outcome(() => jsm.consumers.update('SA', 'workers', { max_ack_pending: 64 })),
      'message get (STREAM.MSG.GET)': await outcome(() => jsm.streams.getMessage('SA', { last_by_subj: 'a.send' })),
    };
    // 10008: "JetStream system temporarily unavailable", at once (the lost region's stream info: after the server's 0.5 s delay).
    expect(answers).toEqual({
      'account info (the client checks JetStream with it by default)': '10008',
      "stream info, the surviving region's stream": 'ok',
      "stream info, the lost region's stream": '10008',
      'stream names': '10008',
      'consumer info': 'ok',
      'publish to the surviving stream': 'ok',
      'pull from its durable consumer': 'ok',
      'stream add, identical to the existing one': '10008',
      'stream add, a new one': '10008',
      'stream update': '10008',
      'consumer add, identical to the existing one': '10008',
      'consumer add, a new one': '10008',
      'consumer update': '10008',
      'message get (STREAM.MSG.GET)': '10008',
    });
    expect(fetched).toEqual(['before', 'during']);
  }, 120_000);

  it('keeps its quorum with a third region as a tie-breaker: one JetStream server that holds no Herald stream', async () => {
    await nc?.close();
    await cluster?.stop();
    cluster = await startSupercluster({ regions: [{ name: 'a' }, { name: 'b' }, { name: 'tie' }] });
    const [a] = cluster.nodes;
    await cluster.stopRegion('b');
    const leader = async () => ((await (await fetch(`${a!.monitorUrl}/jsz`)).json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader;
    // b's server may have been the leader: a and tie elect another.
    await waitFor(async () => ['a-1', 'tie-1'].includes((await leader()) ?? ''), 'a meta leader among the servers left', 20_000);

    nc = await connect({ servers: cluster.urls('a') });
    const jsm = await jetstreamManager(nc, { timeout: 3_000 });
    const subjects = ['a.>'];
    await jsm.streams.add({ name: 'SA', subjects, storage: StorageType.File, num_replicas: 1, placement: { cluster: '', tags: ['region:a'] } });
    await jsm.consumers.add('SA', { durable_name: 'workers', ack_policy: AckPolicy.Explicit });
    await jsm.streams.update('SA', { subjects, max_age: 3600e9 });
    expect((await jsm.streams.info('SA')).cluster?.name).toBe('a');
  }, 60_000);
});
