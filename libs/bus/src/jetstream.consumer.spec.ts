import { Logger } from '@nestjs/common';
import { ConsumerConfig, JetStreamApiError, JetStreamManager } from '@nats-io/jetstream';
import { ensureConsumer, JetStreamConsumerOptions } from './jetstream.consumer';
import { JetStreamConsumers, JetStreamHandler } from './jetstream.consumers';
import type { NatsService } from './nats.service';

const LEADERLESS = { code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' };

/** The consumer part of a JetStreamManager, in memory; `refuse` decides which requests fail and how. */
class FakeConsumers {
  readonly existing = new Map<string, Partial<ConsumerConfig>>();
  readonly calls: string[] = [];
  refuse: (op: 'info' | 'add' | 'update') => Error | null = () => null;

  private request(op: 'info' | 'add' | 'update', name: string): void {
    this.calls.push(`${op} ${name}`);
    const error = this.refuse(op);
    if (error) throw error;
  }
  async info(stream: string, durable: string) {
    this.request('info', `${stream}/${durable}`);
    const config = this.existing.get(`${stream}/${durable}`);
    if (!config) throw new JetStreamApiError({ code: 404, err_code: 10014, description: 'consumer not found' });
    return { config };
  }
  async add(stream: string, config: Partial<ConsumerConfig>) {
    this.request('add', `${stream}/${config.durable_name}`);
    this.existing.set(`${stream}/${config.durable_name}`, config);
    return { config };
  }
  async update(stream: string, durable: string, config: Partial<ConsumerConfig>) {
    this.request('update', `${stream}/${durable}`);
    this.existing.set(`${stream}/${durable}`, { ...this.existing.get(`${stream}/${durable}`), ...config });
    return { config };
  }
}

const options: JetStreamConsumerOptions = { stream: 'SEND', durable: 'senders', filterSubject: 'herald.us-east-1.send', ackWaitMs: 15_000 };

describe('ensureConsumer', () => {
  let consumers: FakeConsumers;
  const jsm = () => ({ consumers }) as unknown as JetStreamManager;

  beforeEach(async () => {
    consumers = new FakeConsumers();
    await ensureConsumer(jsm(), options, 32);
    consumers.calls.length = 0;
  });

  it('only reads a consumer that exists with its settings', async () => {
    expect(await ensureConsumer(jsm(), options, 32)).toBeNull();
    expect(consumers.calls).toEqual(['info SEND/senders']);
  });

  it('hands back a change JetStream cannot make now (its meta group leaderless), with what differs', async () => {
    consumers.refuse = (op) => (op === 'update' ? new JetStreamApiError(LEADERLESS) : null);
    const deferred = await ensureConsumer(jsm(), options, 64);
    expect(deferred).toEqual({ changed: ['max_ack_pending'], error: expect.objectContaining({ code: 10008 }) });
    expect(consumers.existing.get('SEND/senders')!.max_ack_pending).toBe(32);
  });

  it('throws what JetStream refuses for another reason', async () => {
    consumers.refuse = (op) =>
      op === 'update' ? new JetStreamApiError({ code: 400, err_code: 10012, description: 'consumer name in subject does not match' }) : null;
    await expect(ensureConsumer(jsm(), options, 64)).rejects.toThrow('consumer SEND/senders differs in max_ack_pending and could not be updated');
  });
});

describe('JetStreamConsumers', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    for (const level of ['log', 'warn', 'error'] as const) jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    jest.useRealTimers();
  });

  it('pulls a consumer it cannot change now as it is, and changes it once JetStream can', async () => {
    const consumers = new FakeConsumers();
    await ensureConsumer({ consumers } as unknown as JetStreamManager, options, 32);
    let leaderless = true;
    consumers.refuse = (op) => (leaderless && op === 'update' ? new JetStreamApiError(LEADERLESS) : null);
    const pulled: string[] = [];
    const nats = {
      beforeDrain: () => undefined,
      jetstreamManager: async () => ({ consumers }),
      // The runner's pulls: refused, so it pauses and asks again (what it pulls is not this test's).
      jetstream: () => ({
        consumers: {
          get: async (stream: string, durable: string) => {
            pulled.push(`${stream}/${durable}`);
            throw new Error('not in this test');
          },
        },
      }),
    } as unknown as NatsService;
    const handler: JetStreamHandler = { handle: async () => undefined };
    const role = new JetStreamConsumers(nats, [{ options: { ...options, maxAckPending: 64 }, handler }]);

    await role.onApplicationBootstrap();
    expect(pulled).toEqual(['SEND/senders']);
    expect(jest.mocked(Logger.prototype.warn).mock.calls.map(([message]) => String(message))).toContainEqual(
      expect.stringMatching(/^consumer SEND\/senders differs from this release's settings in max_ack_pending, but JetStream cannot change it now/),
    );
    await jest.advanceTimersByTimeAsync(1_000);
    expect(consumers.existing.get('SEND/senders')!.max_ack_pending).toBe(32);
    leaderless = false;
    await jest.advanceTimersByTimeAsync(2_000);
    expect(consumers.existing.get('SEND/senders')!.max_ack_pending).toBe(64);
    const closing = role.close();
    await jest.advanceTimersByTimeAsync(1_000);
    await closing;
  });
});
