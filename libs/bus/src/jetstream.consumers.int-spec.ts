import { INestApplicationContext, Injectable, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test, TestingModule } from '@nestjs/testing';
import { AckPolicy, JetStreamManager } from '@nats-io/jetstream';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { HeraldError, newId } from '@herald/core';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { BusModule } from './bus.module';
import { JetStreamBinding, jetStreamConsumers, JetStreamConsumers, JetStreamHandler } from './jetstream.consumers';
import { JetStreamContext } from './jetstream.context';
import { NatsService } from './nats.service';
import { SendCommand, SendPublisher, sendCommandSchema } from './send-publisher';
import { parsePayload } from './payload.schema';
import { sendStreamName, sendSubject } from './subjects';

const REGION = 'us-east-1';
const DURABLE = 'sender';

interface Delivery {
  payload: unknown;
  subject: string;
  deliveryCount: number;
}

/** What the handler under test does; each test sets it. */
let behaviour: (payload: unknown, ctx: JetStreamContext) => Promise<void> = async () => undefined;
let deliveries: Delivery[] = [];

@Injectable()
class SendHandler implements JetStreamHandler {
  async handle(payload: unknown, ctx: JetStreamContext): Promise<void> {
    deliveries.push({ payload, subject: ctx.getSubject(), deliveryCount: ctx.getDeliveryCount() });
    await behaviour(payload, ctx);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('JetStreamConsumers (real NATS, a role application context)', () => {
  let isolated: IsolatedConfig;
  let config: HeraldConfig;
  let publisherModule: TestingModule;
  let publisher: SendPublisher;
  let jsm: JetStreamManager;
  let stream: string;
  let worker: INestApplicationContext | null = null;

  const command = (): SendCommand => ({ emailId: newId(), teamId: newId(), region: REGION });
  const binding = (overrides: Partial<JetStreamBinding> = {}): JetStreamBinding => ({
    stream,
    durable: DURABLE,
    filterSubject: sendSubject(config.NATS_NAMESPACE, REGION),
    handler: SendHandler,
    ackWaitMs: 2000,
    retry: { initialMs: 100, maxMs: 400 },
    ...overrides,
  });
  const streamMessages = async () => (await jsm.streams.info(stream)).state.messages;
  /** Counts the server's advisories for terminated messages: proof of a term, not an ack. */
  const watchTerminations = () => {
    const seen = { count: 0 };
    const sub = publisherModule.get(NatsService).connection.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${stream}.${DURABLE}`, {
      callback: () => {
        seen.count++;
      },
    });
    return { seen, stop: () => sub.unsubscribe() };
  };
  const consumerState = () => jsm.consumers.info(stream, DURABLE);

  /** A worker role: an application context whose consumers share its NatsService's connection. */
  async function startWorker(
    overrides: Partial<JetStreamBinding> = {},
    handlers: Type<JetStreamHandler>[] = [SendHandler],
  ): Promise<INestApplicationContext> {
    const app = await NestFactory.createApplicationContext(
      {
        module: class WorkerModule {},
        imports: [ConfigModule.forRoot(config), BusModule],
        providers: [...handlers, jetStreamConsumers([binding(overrides)])],
      },
      { logger: false, abortOnError: false },
    );
    worker = app;
    await app.init();
    return app;
  }

  beforeAll(async () => {
    isolated = await isolatedConfig();
    config = isolated.config;
    stream = sendStreamName(config.NATS_NAMESPACE, REGION);
    publisherModule = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config), BusModule] }).compile();
    await publisherModule.init();
    publisher = publisherModule.get(SendPublisher);
    jsm = await publisherModule.get(NatsService).jetstreamManager();
  });

  beforeEach(() => {
    deliveries = [];
    behaviour = async () => undefined;
  });

  afterEach(async () => {
    await worker?.close();
    worker = null;
    // Work-queue streams allow one consumer per subject: each test starts from a clean slate.
    await jsm.consumers.delete(stream, DURABLE).catch(() => undefined);
    await jsm.streams.purge(stream);
  });

  afterAll(async () => {
    await publisherModule?.close();
    await isolated?.cleanup();
  });

  it("delivers the JSON payload to the binding's handler and acks it", async () => {
    await startWorker();
    const cmd = command();
    await publisher.publish(cmd);
    await waitFor(async () => deliveries.length === 1 && (await streamMessages()) === 0, 'the ack');
    expect(deliveries[0]).toEqual({ payload: cmd, subject: `${config.NATS_NAMESPACE}.${REGION}.send.email`, deliveryCount: 1 });
    expect(parsePayload(sendCommandSchema, deliveries[0].payload, 'send command')).toEqual(cmd);
    const consumer = await consumerState();
    expect(consumer.config).toMatchObject({ ack_policy: 'explicit', max_ack_pending: 32, ack_wait: 2000e6 });
  });

  it('redelivers after a handler fails with an ordinary error', async () => {
    behaviour = async (_payload, ctx) => {
      if (ctx.getDeliveryCount() < 3) throw new Error('database unavailable');
    };
    await startWorker();
    await publisher.publish(command());
    await waitFor(async () => deliveries.length === 3 && (await streamMessages()) === 0, 'the third delivery');
    expect(deliveries.map((d) => d.deliveryCount)).toEqual([1, 2, 3]);
  });

  it('terminates a payload that is not JSON without calling the handler or redelivering it', async () => {
    const terminations = watchTerminations();
    await startWorker({ ackWaitMs: 500 });
    await publisherModule.get(NatsService).jetstream().publish(binding().filterSubject, '{"emailId": oops');
    await waitFor(async () => (await consumerState()).delivered.consumer_seq === 1, 'the delivery');
    // Longer than ack_wait and the retry delay: a nak or a missing ack would have redelivered by now.
    await sleep(700);
    const consumer = await consumerState();
    expect(consumer).toMatchObject({ num_ack_pending: 0, num_redelivered: 0, num_pending: 0 });
    expect(consumer.delivered.consumer_seq).toBe(1);
    expect(deliveries).toEqual([]);
    expect(await streamMessages()).toBe(0);
    expect(terminations.seen.count).toBe(1);
    terminations.stop();
  });

  it('terminates a message its handler rejects as invalid (HeraldError validation_error)', async () => {
    behaviour = async (payload) => {
      parsePayload(sendCommandSchema, payload, 'send command');
    };
    const terminations = watchTerminations();
    await startWorker({ ackWaitMs: 500 });
    await publisherModule
      .get(NatsService)
      .jetstream()
      .publish(binding().filterSubject, JSON.stringify({ emailId: 42 }));
    await waitFor(() => deliveries.length === 1, 'the delivery');
    await sleep(700);
    expect(deliveries).toHaveLength(1);
    expect(await consumerState()).toMatchObject({ num_ack_pending: 0, num_redelivered: 0 });
    expect(terminations.seen.count).toBe(1);
    terminations.stop();
  });

  it('never has more than maxAckPending handlers in flight', async () => {
    let running = 0;
    let most = 0;
    behaviour = async () => {
      most = Math.max(most, ++running);
      await sleep(50);
      running--;
    };
    // A durable left by an older release with other settings is updated in place.
    await jsm.consumers.add(stream, {
      durable_name: DURABLE,
      ack_policy: AckPolicy.Explicit,
      filter_subject: binding().filterSubject,
      max_ack_pending: 100,
    });
    await startWorker({ maxAckPending: 2 });
    expect((await consumerState()).config.max_ack_pending).toBe(2);
    await publisher.publishMany(Array.from({ length: 8 }, command));
    await waitFor(async () => deliveries.length === 8 && (await streamMessages()) === 0, 'all eight');
    expect(most).toBe(2);
  });

  it("refuses to boot when a binding's handler is not a provider of the role", async () => {
    await expect(startWorker({}, [])).rejects.toThrow(/JetStreamConsumers.*SendHandler/s);
  });

  it('close() waits for an in-flight handler, which still acks its message', async () => {
    let finished = false;
    behaviour = async (_payload, ctx) => {
      await sleep(300);
      ctx.working();
      await sleep(100);
      finished = true;
    };
    const consumers = (await startWorker()).get(JetStreamConsumers);
    await publisher.publish(command());
    await waitFor(() => deliveries.length === 1, 'the delivery');
    expect(consumers.inFlight()).toEqual({ [DURABLE]: 1 });
    await consumers.close();
    expect(finished).toBe(true);
    await waitFor(async () => (await streamMessages()) === 0, 'the ack of the drained handler', 1000);
  });

  it("runs on the role's NatsService, and app.close() drains handlers before the connection", async () => {
    behaviour = async () => {
      throw new HeraldError('validation_error', 'bad command');
    };
    const terminations = watchTerminations();
    const app = await startWorker();
    const connection = app.get(NatsService).connection;
    const received = connection.stats().inMsgs;

    // The handler's HeraldError reaches the settlement unchanged, so the message is terminated, not retried.
    await publisher.publish(command());
    await waitFor(() => deliveries.length === 1, 'the first delivery');
    await sleep(300);
    expect(deliveries).toHaveLength(1);
    expect(terminations.seen.count).toBe(1);
    terminations.stop();
    // The message came over the role's own connection: the consumers open none of their own.
    expect(connection.stats().inMsgs).toBeGreaterThan(received);

    let finished = false;
    behaviour = async () => {
      await sleep(300);
      finished = true;
    };
    await publisher.publish(command());
    await waitFor(() => deliveries.length === 2, 'the second message');
    await app.close();
    worker = null;
    expect(finished).toBe(true);
    expect(connection.isClosed()).toBe(true);
    await waitFor(async () => (await streamMessages()) === 0, 'the ack of the drained handler', 1000);
  });
});
