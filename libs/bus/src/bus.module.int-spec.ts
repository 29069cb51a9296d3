import { Test, TestingModule } from '@nestjs/testing';
import { JetStreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { HeraldError, newId } from '@herald/core';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { BusModule } from './bus.module';
import { EventPublisher, parseEvents } from './event-publisher';
import { NatsService } from './nats.service';
import { SendPublisher } from './send-publisher';
import { StreamsService } from './streams.service';
import { eventsStreamName, sendStreamName } from './subjects';

describe('BusModule (real NATS)', () => {
  let isolated: IsolatedConfig;
  let config: HeraldConfig;
  let moduleRef: TestingModule;
  let jsm: JetStreamManager;
  let publisher: SendPublisher;

  const messagesIn = async (stream: string) => (await jsm.streams.info(stream)).state.messages;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    config = isolated.config;
    moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config), BusModule] }).compile();
    await moduleRef.init();
    jsm = await moduleRef.get(NatsService).jetstreamManager();
    publisher = moduleRef.get(SendPublisher);
  });

  afterAll(async () => {
    await moduleRef?.close();
    await isolated?.cleanup();
  });

  it('is ready once connected', () => {
    expect(moduleRef.get(NatsService).isReady()).toBe(true);
  });

  it('creates the send and events streams of every region', async () => {
    const ns = config.NATS_NAMESPACE;
    expect(config.HERALD_REGIONS).toHaveLength(4);
    for (const region of config.HERALD_REGIONS) {
      const send = await jsm.streams.info(sendStreamName(ns, region));
      expect(send.config).toMatchObject({
        subjects: [`${ns}.${region}.send.>`],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window: 120e9,
        num_replicas: config.NATS_REPLICAS,
      });
      const events = await jsm.streams.info(eventsStreamName(ns, region));
      expect(events.config).toMatchObject({
        subjects: [`${ns}.${region}.events.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: 7 * 24 * 3600 * 1e9,
        duplicate_window: 120e9,
      });
    }
  });

  it('creates missing streams when several processes boot at once', async () => {
    const region = config.HERALD_REGIONS[2];
    await jsm.streams.delete(sendStreamName(config.NATS_NAMESPACE, region));
    await jsm.streams.delete(eventsStreamName(config.NATS_NAMESPACE, region));
    const boots = await Promise.all([1, 2, 3].map(() => Test.createTestingModule({ imports: [ConfigModule.forRoot(config), BusModule] }).compile()));
    await Promise.all(boots.map((m) => m.init()));
    await Promise.all(boots.map((m) => m.close()));
    expect(boots.map((m) => m.get(NatsService).isReady())).toEqual([false, false, false]);
    expect((await jsm.streams.info(sendStreamName(config.NATS_NAMESPACE, region))).config.retention).toBe(RetentionPolicy.Workqueue);
    expect((await jsm.streams.info(eventsStreamName(config.NATS_NAMESPACE, region))).config.retention).toBe(RetentionPolicy.Limits);
  });

  it('updates a stream whose settings drifted', async () => {
    const name = eventsStreamName(config.NATS_NAMESPACE, config.HERALD_REGIONS[1]);
    await jsm.streams.update(name, { duplicate_window: 10e9, max_age: 3600e9 });
    await moduleRef.get(StreamsService).ensureStreams();
    expect((await jsm.streams.info(name)).config).toMatchObject({ duplicate_window: 120e9, max_age: 7 * 24 * 3600 * 1e9 });
  });

  it('stores a send command once when the same email is published twice', async () => {
    const cmd = { emailId: newId(), teamId: newId(), region: 'us-east-1' };
    const stream = sendStreamName(config.NATS_NAMESPACE, 'us-east-1');
    const before = await messagesIn(stream);
    const first = await publisher.publish(cmd);
    const second = await publisher.publish(cmd);
    expect(first.duplicate).toBe(false);
    expect(second).toEqual({ seq: first.seq, duplicate: true });
    expect(await messagesIn(stream)).toBe(before + 1);
    const stored = await jsm.streams.getMessage(stream, { seq: first.seq });
    expect(stored?.subject).toBe(`${config.NATS_NAMESPACE}.us-east-1.send.email`);
    expect(stored?.json()).toEqual(cmd);
    expect(stored?.header.get('Nats-Msg-Id')).toBe(cmd.emailId);
  });

  it("keeps one region's send commands out of another region's stream", async () => {
    const ns = config.NATS_NAMESPACE;
    const euBefore = await messagesIn(sendStreamName(ns, 'eu-west-1'));
    const saBefore = await messagesIn(sendStreamName(ns, 'sa-east-1'));
    await publisher.publish({ emailId: newId(), teamId: newId(), region: 'sa-east-1' });
    expect(await messagesIn(sendStreamName(ns, 'sa-east-1'))).toBe(saBefore + 1);
    expect(await messagesIn(sendStreamName(ns, 'eu-west-1'))).toBe(euBefore);
  });

  it('rejects a region outside HERALD_REGIONS and a malformed command', async () => {
    const bad = publisher.publish({ emailId: newId(), teamId: newId(), region: 'us-west-2' });
    await expect(bad).rejects.toBeInstanceOf(HeraldError);
    await expect(bad).rejects.toMatchObject({ code: 'validation_error' });
    await expect(publisher.publish({ emailId: 'nope', teamId: newId(), region: 'us-east-1' })).rejects.toMatchObject({
      code: 'validation_error',
      message: expect.stringContaining('emailId'),
    });
  });

  it('publishes many concurrently and reports each command', async () => {
    const good = Array.from({ length: 20 }, () => ({ emailId: newId(), teamId: newId(), region: 'ap-northeast-1' }));
    const bad = { emailId: newId(), teamId: newId(), region: 'mars-north-1' };
    const results = await publisher.publishMany([...good, good[0], bad]);
    expect(results).toHaveLength(22);
    expect(results.slice(0, 20).every((r) => r.ok && !r.duplicate)).toBe(true);
    expect(results[20]).toMatchObject({ ok: true, duplicate: true, command: good[0] });
    expect(results[21]).toMatchObject({ ok: false, command: bad, error: { code: 'validation_error' } });
    expect(await publisher.publishMany([])).toEqual([]);
  });

  it("publishes events to the region's events subject, deduplicated by event id", async () => {
    const events = moduleRef.get(EventPublisher);
    const event = { id: newId(), type: 'email.sent', created_at: new Date().toISOString(), data: { email_id: newId() }, team_id: newId() };
    const first = await events.publish('eu-west-1', event);
    expect(await events.publish('eu-west-1', event)).toEqual({ seq: first.seq, duplicate: true });
    const stored = await jsm.streams.getMessage(eventsStreamName(config.NATS_NAMESPACE, 'eu-west-1'), { seq: first.seq });
    expect(stored?.subject).toBe(`${config.NATS_NAMESPACE}.eu-west-1.events.email.sent`);
    expect(stored?.json()).toEqual(event);
    await expect(events.publish('eu-west-1', { ...event, id: newId(), type: 'email.>' })).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('publishes events of one type as one message, which consumers read back as those events', async () => {
    const events = moduleRef.get(EventPublisher);
    const event = (type: string) => ({ id: newId(), type, created_at: new Date().toISOString(), data: { email_id: newId() }, team_id: newId() });
    const clicks = [event('email.clicked'), event('email.clicked'), event('email.clicked')];
    const first = await events.publishMany('eu-west-1', clicks);
    expect(await events.publishMany('eu-west-1', clicks)).toEqual({ seq: first.seq, duplicate: true });
    const stored = await jsm.streams.getMessage(eventsStreamName(config.NATS_NAMESPACE, 'eu-west-1'), { seq: first.seq });
    expect(stored?.subject).toBe(`${config.NATS_NAMESPACE}.eu-west-1.events.email.clicked`);
    expect(parseEvents(stored?.json())).toEqual(clicks);
    expect(parseEvents(clicks[0])).toEqual([clicks[0]]);
    await expect(events.publishMany('eu-west-1', [clicks[0]!, event('email.opened')])).rejects.toMatchObject({ code: 'validation_error' });
    expect(() => parseEvents({ events: [] })).toThrow(/^invalid event/);
  });
});
