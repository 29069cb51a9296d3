import { eventually, freeSharedPort, MxSink, TestDnsServer } from '@herald/testing';
import type { DeliveryJob, RecipientOutcome } from '../delivery.types';
import { SmtpTransmitter, type TransmitterOptions } from './smtp-transmitter';

const MESSAGE = Buffer.from('From: a@herald.test\r\nTo: b@example.test\r\nSubject: hi\r\n\r\nhello\r\n');
const BUSY = '421 4.3.2 Service not available, closing transmission channel';
const BACKOFF_MS = 1_000;

/** A destination's memory of its failures (back-off, probe) and its queue, which holds jobs without their callers' slots. */
describe('Destination: dead-destination memory and waiting jobs', () => {
  let dns: TestDnsServer;
  let port: number;
  let sink: MxSink;
  const transmitters: SmtpTransmitter[] = [];

  const transmitter = (overrides: Partial<TransmitterOptions> = {}) => {
    const t = new SmtpTransmitter({
      hostname: 'out.herald.test',
      port,
      dnsServers: [dns.address()],
      dnsTimeoutMs: 500,
      mxCacheMs: 0,
      connectionsPerDestination: 2,
      messagesPerConnection: 10,
      queuePerDestination: 10,
      connectTimeoutMs: 500,
      greetingTimeoutMs: 500,
      commandTimeoutMs: 2_000,
      failuresBeforeBackoff: 3,
      backoffInitialMs: BACKOFF_MS,
      ...overrides,
    });
    transmitters.push(t);
    return t;
  };
  let sequence = 0;
  const job = (): DeliveryJob => ({
    emailId: `em_${++sequence}`,
    domain: 'example.test',
    recipients: [`rcpt${sequence}@example.test`],
    envelopeFrom: 'bounce@herald.test',
    message: MESSAGE,
    requireTls: false,
  });
  const outcome = async (delivery: Promise<{ outcome: RecipientOutcome }[]>) => (await delivery)[0].outcome;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Three failing sessions: the destination is suspended for BACKOFF_MS from the last. */
  const suspend = async (t: SmtpTransmitter) => {
    sink.behave({ greeting: BUSY });
    for (let i = 0; i < 3; i++) expect(await outcome(t.deliver(job()))).toMatchObject({ kind: 'deferred', mx: 'mx.example.test' });
    return Date.now();
  };

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    port = await freeSharedPort(['127.0.0.2']);
    sink = await MxSink.start({ host: '127.0.0.2', port, starttls: false });
  });
  beforeEach(() => {
    dns
      .clear()
      .set('example.test', 'MX', [{ exchange: 'mx.example.test', priority: 10 }])
      .set('mx.example.test', 'A', ['127.0.0.2']);
    sink.reset();
  });
  afterEach(async () => {
    await Promise.all(transmitters.splice(0).map((t) => t.close()));
  });
  afterAll(async () => {
    await sink.close();
    await dns.close();
  });

  it('counts a 421 inside the session: three suspend the destination, whose mail is then deferred without a connection until the back-off ends', async () => {
    const t = transmitter();
    sink.behave({ defer: BUSY });
    let lastTry = 0;
    for (let i = 0; i < 3; i++) {
      lastTry = Date.now();
      expect(await outcome(t.deliver(job()))).toEqual({ kind: 'deferred', mx: 'mx.example.test', response: BUSY });
    }
    sink.behave('accept');

    const later = await outcome(t.deliver(job()));
    expect(later).toEqual({
      kind: 'deferred',
      mx: null,
      response: expect.stringMatching(
        /^451 4\.4\.1 Herald: mx\.example\.test in back-off until .* after 3 consecutive failures; last: mx\.example\.test: 421 4\.3\.2/,
      ),
      notBefore: expect.any(Date),
    });
    const notBefore = (later as { notBefore: Date }).notBefore.getTime();
    expect(notBefore).toBeGreaterThanOrEqual(lastTry + BACKOFF_MS);
    expect(notBefore).toBeLessThanOrEqual(Date.now() + BACKOFF_MS);
    expect(sink.connections).toBe(3);
  });

  it('lets one probe through when the back-off ends, the other jobs waiting behind it; its success releases them all', async () => {
    const t = transmitter();
    const trippedAt = await suspend(t);
    sink.behave({ delayMs: 1_000 });
    await sleep(trippedAt + BACKOFF_MS + 20 - Date.now());

    const jobs = [1, 2, 3].map(() => t.deliver(job()));
    await eventually(async () => expect(t.stats()).toEqual({ destinations: 1, queued: 2, active: 1 }));
    expect(sink.connections).toBe(4);
    for (const delivery of jobs) expect(await outcome(delivery)).toMatchObject({ kind: 'delivered' });
    expect(sink.received).toBe(3);
  });

  it('suspends again for twice as long when the probe fails, deferring the jobs that waited behind it at once', async () => {
    const t = transmitter();
    const trippedAt = await suspend(t);
    sink.behave('stall');
    await sleep(trippedAt + BACKOFF_MS + 20 - Date.now());

    const probedAt = Date.now();
    const probe = t.deliver(job());
    const queued = [t.deliver(job()), t.deliver(job())];
    expect(await outcome(probe)).toMatchObject({ kind: 'deferred', mx: 'mx.example.test', response: expect.stringMatching(/greeting/i) });
    for (const delivery of queued) {
      const deferred = await outcome(delivery);
      expect(deferred).toMatchObject({
        kind: 'deferred',
        mx: null,
        response: expect.stringMatching(/back-off .* after 4 consecutive failures; last: .*greeting/i),
      });
      // The greeting timeout (500 ms) passed before the probe failed; the back-off doubled from there.
      expect((deferred as { notBefore: Date }).notBefore.getTime()).toBeGreaterThanOrEqual(probedAt + 500 + 2 * BACKOFF_MS);
    }
    expect(sink.connections).toBe(4);
  });

  it('tells the caller when its job has to wait, and keeps it waiting on the caller beyond the transmitter-wide limit', async () => {
    const t = transmitter({ connectionsPerDestination: 1, queuePerTransmitter: 1 });
    sink.behave({ delayMs: 1_000 });
    const told: number[] = [];
    const jobs = [1, 2, 3].map((n) => t.deliver(job(), () => told.push(n)));
    await eventually(async () => expect(t.stats()).toEqual({ destinations: 1, queued: 2, active: 1 }));
    // One is being sent; one waits in the queue; the last waits too, but the queue is full worker-wide.
    expect(told).toHaveLength(1);
    for (const delivery of jobs) expect(await outcome(delivery)).toMatchObject({ kind: 'delivered' });
  });

  it('keeps a waiting job on its caller once the waiting messages pass the transmitter-wide byte limit', async () => {
    // Room for one waiting MESSAGE by bytes, not two: thousands of large messages queued for a tarpit would otherwise pile up in memory.
    const t = transmitter({ connectionsPerDestination: 1, queueBytesPerTransmitter: MESSAGE.length });
    sink.behave({ delayMs: 1_000 });
    const told: number[] = [];
    const jobs = [1, 2, 3].map((n) => t.deliver(job(), () => told.push(n)));
    await eventually(async () => expect(t.stats()).toEqual({ destinations: 1, queued: 2, active: 1 }));
    expect(told).toEqual([2]);
    for (const delivery of jobs) expect(await outcome(delivery)).toMatchObject({ kind: 'delivered' });
  });

  it('asks a job whether its email is still held once its connection is ready, and sends nothing for one that is not', async () => {
    const t = transmitter({ connectionsPerDestination: 1 });
    sink.behave({ delayMs: 300 });
    const asked: string[] = [];
    const fenced = (held: boolean): DeliveryJob => {
      const j = job();
      return { ...j, held: async () => (asked.push(j.emailId), held) };
    };
    // The second waits behind the first; by its turn its claim is gone (another attempt holds the email).
    const [first, lost, third] = [fenced(true), fenced(false), fenced(true)];
    const results = await Promise.all([first, lost, third].map((j) => outcome(t.deliver(j))));
    expect(asked).toEqual([first.emailId, lost.emailId, third.emailId]);
    expect(results[0]).toMatchObject({ kind: 'delivered' });
    expect(results[1]).toMatchObject({ kind: 'deferred', mx: null, notAttempted: true, response: expect.stringContaining('not sent') });
    expect(results[2]).toMatchObject({ kind: 'delivered' });
    expect(sink.messages.map((m) => m.recipients)).toEqual([first.recipients, third.recipients]);
    // The connection the lost job was given went back unused: one session carried both.
    expect(sink.connections).toBe(1);
  });
});
