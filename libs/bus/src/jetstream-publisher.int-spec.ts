import { DiscardPolicy, JetStreamManager } from '@nats-io/jetstream';
import { Status } from '@nats-io/transport-node';
import { HeraldConfig, pick } from '@herald/config';
import { newId } from '@herald/core';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { JetStreamPublishError, JetStreamPublisher } from './jetstream-publisher';
import { BUS_CONFIG } from './bus.config';
import { NatsService } from './nats.service';

async function waitForStatus(nats: NatsService, type: Status['type']): Promise<void> {
  for await (const status of nats.connection.status()) {
    if (status.type === type) return;
  }
}

describe('JetStreamPublisher (real NATS)', () => {
  let isolated: IsolatedConfig;
  let config: HeraldConfig;
  let nats: NatsService;
  let jsm: JetStreamManager;
  let publisher: JetStreamPublisher;
  let stream: string;
  let subject: string;

  /** A stream of the suite's namespace, so cleanup deletes it. */
  const addStream = async (name: string, extra: { max_msgs?: number; discard?: DiscardPolicy } = {}) => {
    const streamName = `${config.NATS_NAMESPACE.toUpperCase()}_${name}`;
    const subjects = `${config.NATS_NAMESPACE}.${name.toLowerCase()}.>`;
    await jsm.streams.add({ name: streamName, subjects: [subjects], ...extra });
    return { name: streamName, subject: `${config.NATS_NAMESPACE}.${name.toLowerCase()}.msg` };
  };
  const messagesIn = async (name: string) => (await jsm.streams.info(name)).state.messages;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    config = isolated.config;
    nats = new NatsService(pick(config, BUS_CONFIG.keys));
    await nats.connect();
    jsm = await nats.jetstreamManager();
    publisher = new JetStreamPublisher(nats);
    ({ name: stream, subject } = await addStream('PUBTEST'));
  });

  afterAll(async () => {
    await nats?.drain();
    await isolated?.cleanup();
  });

  it('acks each publish with the next sequence', async () => {
    const first = await publisher.publish(subject, 'one', newId());
    const second = await publisher.publish(subject, new TextEncoder().encode('two'), newId());
    expect(first.duplicate).toBe(false);
    expect(second).toEqual({ seq: first.seq + 1, duplicate: false });
    const stored = await jsm.streams.getMessage(stream, { seq: second.seq });
    expect(stored?.string()).toBe('two');
  });

  it('reports a second publish of the same msgId as a duplicate of the first', async () => {
    const msgId = newId();
    const first = await publisher.publish(subject, 'once', msgId);
    const second = await publisher.publish(subject, 'twice', msgId);
    expect(second).toEqual({ seq: first.seq, duplicate: true });
    expect((await jsm.streams.getMessage(stream, { seq: first.seq }))?.header.get('Nats-Msg-Id')).toBe(msgId);
  });

  it('acks 1,000 concurrent publishes with distinct sequences', async () => {
    const { name, subject: manySubject } = await addStream('MANY');
    const acks = await Promise.all(Array.from({ length: 1000 }, (_, i) => publisher.publish(manySubject, `m${i}`, newId())));
    expect(new Set(acks.map((ack) => ack.seq)).size).toBe(1000);
    expect(acks.every((ack) => !ack.duplicate)).toBe(true);
    expect(await messagesIn(name)).toBe(1000);
  });

  it('rejects at once when no stream listens on the subject', async () => {
    const orphan = `${config.NATS_NAMESPACE}.nowhere.msg`;
    const started = Date.now();
    const failed = publisher.publish(orphan, 'lost', newId());
    await expect(failed).rejects.toBeInstanceOf(JetStreamPublishError);
    await expect(failed).rejects.toMatchObject({ reason: 'no_stream', message: `no JetStream stream for subject ${orphan}` });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('rejects by timeout when a subscriber never answers', async () => {
    const silent = `${config.NATS_NAMESPACE}.silent.msg`;
    const sub = nats.connection.subscribe(silent, { callback: () => undefined });
    const quick = new JetStreamPublisher(nats, { timeoutMs: 300 });
    const started = Date.now();
    try {
      await expect(quick.publish(silent, 'unheard', newId())).rejects.toMatchObject({
        reason: 'timeout',
        message: expect.stringContaining(silent),
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      sub.unsubscribe();
    }
  });

  it("rejects with JetStream's description when the stream refuses the message", async () => {
    const full = await addStream('FULL', { max_msgs: 1, discard: DiscardPolicy.New });
    await publisher.publish(full.subject, 'fits', newId());
    const refused = publisher.publish(full.subject, 'does not fit', newId());
    await expect(refused).rejects.toMatchObject({ reason: 'rejected', errCode: 10077 });
    await expect(refused).rejects.toThrow(`publish to ${full.subject} rejected: maximum messages exceeded`);
  });

  describe('on its own connection', () => {
    let own: NatsService;
    beforeEach(async () => {
      own = new NatsService(pick(config, BUS_CONFIG.keys));
      await own.connect();
    });
    afterEach(async () => {
      await own.drain();
    });

    it('rejects pending publishes when the connection closes, and later ones at once', async () => {
      const silent = `${config.NATS_NAMESPACE}.closing.msg`;
      nats.connection.subscribe(silent, { callback: () => undefined, max: 3 });
      await nats.connection.flush();
      const ownPublisher = new JetStreamPublisher(own);
      const pending = [1, 2, 3].map((i) => ownPublisher.publish(silent, `p${i}`, newId()));
      await own.connection.flush();
      await own.connection.close();
      const results = await Promise.allSettled(pending);
      expect(results.map((r) => r.status === 'rejected' && (r.reason as JetStreamPublishError).reason)).toEqual(['closed', 'closed', 'closed']);
      await expect(ownPublisher.publish(subject, 'too late', newId())).rejects.toThrow();
    });

    it('keeps acking after a reconnect, which resubscribes the inbox', async () => {
      const ownPublisher = new JetStreamPublisher(own, { timeoutMs: 1000 });
      const before = await ownPublisher.publish(subject, 'before', newId());
      const reconnected = waitForStatus(own, 'reconnect');
      await own.connection.reconnect();
      await reconnected;
      const after = await ownPublisher.publish(subject, 'after', newId());
      expect(after.seq).toBeGreaterThan(before.seq);
    });

    it('lets publishes in flight get their acks during a graceful drain', async () => {
      const ownPublisher = new JetStreamPublisher(own);
      const before = await messagesIn(stream);
      const inFlight = Array.from({ length: 200 }, (_, i) => ownPublisher.publish(subject, `d${i}`, newId()));
      await own.drain();
      const acks = await Promise.all(inFlight);
      expect(new Set(acks.map((ack) => ack.seq)).size).toBe(200);
      expect(await messagesIn(stream)).toBe(before + 200);
    });
  });
});
