import { Controller, INestMicroservice, Module, UseFilters } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { Test, TestingModule } from '@nestjs/testing';
import { AckPolicy, JetStreamManager } from '@nats-io/jetstream';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { HeraldError, newId } from '@herald/core';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { BusModule } from './bus.module';
import { JetStreamConsumerOptions } from './jetstream.consumer';
import { JetStreamContext } from './jetstream.context';
import { JetStreamExceptionFilter } from './jetstream-exception.filter';
import { JetStreamServer } from './jetstream.server';
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

@Controller()
class SendHandlers {
  @EventPattern('send')
  async handle(@Payload() payload: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    deliveries.push({ payload, subject: ctx.getSubject(), deliveryCount: ctx.getDeliveryCount() });
    await behaviour(payload, ctx);
  }
}

/** The same handler for the hybrid app, where the filter is attached to the controller. */
@Controller()
@UseFilters(JetStreamExceptionFilter)
class FilteredSendHandlers extends SendHandlers {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('JetStreamServer (real NATS, real Nest microservice)', () => {
  let isolated: IsolatedConfig;
  let config: HeraldConfig;
  let publisherModule: TestingModule;
  let publisher: SendPublisher;
  let jsm: JetStreamManager;
  let stream: string;
  let worker: INestMicroservice | NestFastifyApplication | null = null;

  const command = (): SendCommand => ({ emailId: newId(), teamId: newId(), region: REGION });
  const consumerOptions = (overrides: Partial<JetStreamConsumerOptions> = {}): JetStreamConsumerOptions => ({
    stream,
    durable: DURABLE,
    filterSubject: sendSubject(config.NATS_NAMESPACE, REGION),
    pattern: 'send',
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

  /** A worker role: a standalone Nest microservice with its own connection. */
  async function startWorker(overrides: Partial<JetStreamConsumerOptions> = {}): Promise<JetStreamServer> {
    const server = new JetStreamServer({ nats: { servers: config.NATS_URL }, consumers: [consumerOptions(overrides)] });
    const app = await NestFactory.createMicroservice(
      { module: class WorkerModule {}, imports: [ConfigModule.forRoot(config), BusModule], controllers: [SendHandlers] },
      { strategy: server, logger: false },
    );
    app.useGlobalFilters(new JetStreamExceptionFilter());
    worker = app;
    await app.listen();
    return server;
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

  it('delivers the JSON payload to the @EventPattern handler and acks it', async () => {
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
    await publisherModule.get(NatsService).jetstream().publish(consumerOptions().filterSubject, '{"emailId": oops');
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
    await publisherModule.get(NatsService).jetstream().publish(consumerOptions().filterSubject, JSON.stringify({ emailId: 42 }));
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
      filter_subject: consumerOptions().filterSubject,
      max_ack_pending: 100,
    });
    await startWorker({ maxAckPending: 2 });
    expect((await consumerState()).config.max_ack_pending).toBe(2);
    await publisher.publishMany(Array.from({ length: 8 }, command));
    await waitFor(async () => deliveries.length === 8 && (await streamMessages()) === 0, 'all eight');
    expect(most).toBe(2);
  });

  it('refuses to listen when no handler has the pattern of a consumer', async () => {
    await expect(startWorker({ pattern: 'nobody-handles-this' })).rejects.toThrow(/no @EventPattern\('nobody-handles-this'\)/);
  });

  it('close() waits for an in-flight handler, which still acks its message', async () => {
    let finished = false;
    behaviour = async (_payload, ctx) => {
      await sleep(300);
      ctx.working();
      await sleep(100);
      finished = true;
    };
    const server = await startWorker();
    await publisher.publish(command());
    await waitFor(() => deliveries.length === 1, 'the delivery');
    expect(server.inFlight()).toEqual({ [DURABLE]: 1 });
    await server.close();
    expect(finished).toBe(true);
    await waitFor(async () => (await streamMessages()) === 0, 'the ack of the drained handler', 1000);
  });

  it('in a hybrid app sharing NatsService, app.close() drains handlers before the connection', async () => {
    behaviour = async () => {
      throw new HeraldError('validation_error', 'bad command');
    };
    const app = await NestFactory.create<NestFastifyApplication>(
      { module: class ApiModule {}, imports: [ConfigModule.forRoot(config), BusModule], controllers: [FilteredSendHandlers] },
      new FastifyAdapter(),
      { logger: false },
    );
    worker = app;
    const server = new JetStreamServer({ nats: app.get(NatsService), consumers: [consumerOptions()] });
    app.connectMicroservice({ strategy: server });
    await app.init();
    await app.startAllMicroservices();
    expect(server.unwrap()).toBe(app.get(NatsService).connection);

    // The controller-level filter exposes the HeraldError, so the message is terminated, not retried.
    await publisher.publish(command());
    await waitFor(() => deliveries.length === 1, 'the first delivery');
    await sleep(300);
    expect(deliveries).toHaveLength(1);

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
    await waitFor(async () => (await streamMessages()) === 0, 'the ack of the drained handler', 1000);
  });
});
