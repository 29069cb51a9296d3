import { eventually, freeSharedPort, MxSink, TestDnsServer } from '@herald/testing';
import { classifyRefusal } from '../bounce-classification';
import type { DeliveryJob, RecipientOutcome, RecipientResult } from '../delivery.types';
import { SmtpTransmitter, type TransmitterOptions } from './smtp-transmitter';

/** Nothing listens here: connections are refused at once. */
const DEAD = '127.0.0.9';
const MESSAGE = Buffer.from('From: a@herald.test\r\nTo: b@example.test\r\nSubject: hi\r\n\r\nhello\r\n');

describe('SmtpTransmitter', () => {
  let dns: TestDnsServer;
  let port: number;
  let primary: MxSink;
  let secondary: MxSink;
  let plain: MxSink;
  let stalled: MxSink;
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
      // Generous, so a healthy local sink always greets in time beside a busy test lane; the tests
      // of a stalled server set their own.
      connectTimeoutMs: 2_000,
      greetingTimeoutMs: 2_000,
      commandTimeoutMs: 2_000,
      backoffInitialMs: 10_000,
      ...overrides,
    });
    transmitters.push(t);
    return t;
  };
  const job = (domain: string, locals: string[] = ['rcpt'], requireTls = false): DeliveryJob => ({
    emailId: 'em_1',
    domain,
    recipients: locals.map((local) => `${local}@${domain}`),
    envelopeFrom: 'bounce+em_1@herald.test',
    message: MESSAGE,
    requireTls,
  });
  const outcomes = (results: RecipientResult[]): Record<string, RecipientOutcome> =>
    Object.fromEntries(results.map((r) => [r.recipient.split('@')[0], r.outcome]));
  const mx = (domain: string, ...hosts: [string, number][]) =>
    dns.set(
      domain,
      'MX',
      hosts.map(([exchange, priority]) => ({ exchange, priority })),
    );

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    port = await freeSharedPort(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', DEAD]);
    primary = await MxSink.start({ host: '127.0.0.2', port, hostname: 'mx1.example.test' });
    secondary = await MxSink.start({ host: '127.0.0.3', port });
    plain = await MxSink.start({ host: '127.0.0.4', port, starttls: false });
    stalled = await MxSink.start({ host: '127.0.0.5', port });
  });
  beforeEach(() => {
    dns
      .clear()
      .set('mx1.example.test', 'A', ['127.0.0.2'])
      .set('mx2.example.test', 'A', ['127.0.0.3'])
      .set('plain.example.test', 'A', ['127.0.0.4'])
      .set('stalled.example.test', 'A', ['127.0.0.5'])
      .set('dead.example.test', 'A', [DEAD]);
    for (const sink of [primary, secondary, plain, stalled]) sink.reset();
    stalled.behave('stall');
  });
  afterEach(async () => {
    await Promise.all(transmitters.splice(0).map((t) => t.close()));
  });
  afterAll(async () => {
    await Promise.all([primary, secondary, plain, stalled].map((sink) => sink.close()));
    await dns.close();
  });

  it('delivers to the most preferred MX over STARTTLS, naming the MX and the final reply', async () => {
    mx('example.test', ['mx2.example.test', 20], ['mx1.example.test', 10]);
    const [result] = await transmitter().deliver(job('example.test'));
    expect(result).toEqual({
      recipient: 'rcpt@example.test',
      outcome: { kind: 'delivered', mx: 'mx1.example.test', response: expect.stringMatching(/^250 /), tls: true },
    });
    expect(primary.messages).toHaveLength(1);
    expect(primary.messages[0]).toMatchObject({
      envelopeFrom: 'bounce+em_1@herald.test',
      recipients: ['rcpt@example.test'],
      raw: MESSAGE,
      secure: true,
      clientHostname: 'out.herald.test',
    });
    expect(secondary.received).toBe(0);
  });

  it('falls back to the next MX when the first refuses connections', async () => {
    mx('example.test', ['dead.example.test', 10], ['mx2.example.test', 20]);
    const [result] = await transmitter().deliver(job('example.test'));
    expect(result.outcome).toMatchObject({ kind: 'delivered', mx: 'mx2.example.test' });
    expect(secondary.received).toBe(1);
  });

  it("delivers to the domain's own address when it has no MX", async () => {
    dns.set('bare.test', 'A', ['127.0.0.3']);
    const [result] = await transmitter().deliver(job('bare.test'));
    expect(result.outcome).toMatchObject({ kind: 'delivered', mx: 'bare.test' });
    expect(secondary.messages[0].recipients).toEqual(['rcpt@bare.test']);
  });

  it('bounces a null MX and a missing domain, and defers a SERVFAIL, without connecting', async () => {
    mx('nullmx.test', ['.', 0]);
    dns.servfail('failing.test');
    const t = transmitter();
    const [nullMx] = await t.deliver(job('nullmx.test'));
    expect(nullMx.outcome).toMatchObject({ kind: 'bounced', mx: null, bounce: { type: 'Permanent', subType: 'General' } });
    expect(JSON.stringify(nullMx.outcome)).toMatch(/null MX.*RFC 7505/);
    const [missing] = await t.deliver(job('missing.test'));
    expect(missing.outcome).toMatchObject({ kind: 'bounced', bounce: { type: 'Permanent', subType: 'General' } });
    expect(JSON.stringify(missing.outcome)).toMatch(/domain does not exist/);
    const [failing] = await t.deliver(job('failing.test'));
    expect(failing.outcome).toMatchObject({ kind: 'deferred', mx: null, response: expect.stringContaining('ESERVFAIL') });
    expect(t.stats().destinations).toBe(0);
  });

  it('defers on a 4xx and bounces on a 5xx reply to the message, classified by classifyRefusal', async () => {
    mx('example.test', ['mx1.example.test', 10]);
    const t = transmitter();
    primary.behave({ defer: '451 4.7.1 try later' });
    const [deferred] = await t.deliver(job('example.test'));
    expect(deferred.outcome).toEqual({ kind: 'deferred', mx: 'mx1.example.test', response: '451 4.7.1 try later' });

    const refusal = '550 5.7.1 message content rejected as spam';
    primary.behave({ reject: refusal });
    const [bounced] = await t.deliver(job('example.test'));
    expect(bounced.outcome).toEqual({ kind: 'bounced', mx: 'mx1.example.test', bounce: classifyRefusal(refusal) });
    expect(classifyRefusal(refusal).subType).toBe('ContentRejected');
    expect(primary.received).toBe(0);
  });

  it('gives each recipient of one transaction its own outcome', async () => {
    mx('example.test', ['mx1.example.test', 10]);
    primary
      .recipientRule('gone@example.test', { reject: '550 5.1.1 user unknown' })
      .recipientRule('later@example.test', { defer: '452 4.2.2 mailbox busy' });
    const t = transmitter();
    const mixed = outcomes(await t.deliver(job('example.test', ['ok', 'gone', 'later', 'ok2'])));
    expect(mixed.ok).toMatchObject({ kind: 'delivered', mx: 'mx1.example.test' });
    expect(mixed.ok2).toMatchObject({ kind: 'delivered' });
    expect(mixed.gone).toEqual({ kind: 'bounced', mx: 'mx1.example.test', bounce: classifyRefusal('550 5.1.1 user unknown') });
    expect(mixed.gone).toMatchObject({ bounce: { type: 'Permanent', subType: 'NoEmail' } });
    expect(mixed.later).toEqual({ kind: 'deferred', mx: 'mx1.example.test', response: '452 4.2.2 mailbox busy' });
    expect(primary.messages.map((m) => m.recipients)).toEqual([['ok@example.test', 'ok2@example.test']]);

    // Every recipient refused: nodemailer fails the send, yet each still gets its own reply.
    const refused = outcomes(await t.deliver(job('example.test', ['gone', 'later'])));
    expect(refused.gone).toMatchObject({ kind: 'bounced', bounce: { subType: 'NoEmail' } });
    expect(refused.later).toEqual({ kind: 'deferred', mx: 'mx1.example.test', response: '452 4.2.2 mailbox busy' });
    expect(primary.received).toBe(1);
  });

  it('defers a greylisted first attempt and delivers the retry', async () => {
    mx('example.test', ['mx1.example.test', 10]);
    primary.behave('greylist');
    const t = transmitter();
    expect((await t.deliver(job('example.test')))[0].outcome).toMatchObject({ kind: 'deferred', response: expect.stringMatching(/^450 4\.2\.0/) });
    expect((await t.deliver(job('example.test')))[0].outcome).toMatchObject({ kind: 'delivered' });
  });

  it('never sends in plaintext when TLS is required and not offered', async () => {
    mx('plain.test', ['plain.example.test', 10]);
    mx('example.test', ['mx1.example.test', 10]);
    const t = transmitter();
    const [refused] = await t.deliver(job('plain.test', ['rcpt'], true));
    expect(refused.outcome).toMatchObject({ kind: 'deferred', mx: 'plain.example.test' });
    expect(plain.received).toBe(0);
    expect((await t.deliver(job('plain.test')))[0].outcome).toMatchObject({ kind: 'delivered', tls: false });
    expect(plain.messages[0].secure).toBe(false);
    expect((await t.deliver(job('example.test', ['rcpt'], true)))[0].outcome).toMatchObject({ kind: 'delivered', tls: true });
    expect(primary.messages[0].secure).toBe(true);
  });

  it('defers when the MX never greets, or drops the connection at DATA', async () => {
    mx('stalled.test', ['stalled.example.test', 10]);
    mx('example.test', ['mx1.example.test', 10]);
    const t = transmitter({ greetingTimeoutMs: 300 });
    const started = Date.now();
    const [stall] = await t.deliver(job('stalled.test'));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(stall.outcome).toMatchObject({ kind: 'deferred', mx: 'stalled.example.test', response: expect.stringMatching(/greeting/i) });

    primary.behave('drop');
    const [dropped] = await t.deliver(job('example.test'));
    expect(dropped.outcome).toMatchObject({ kind: 'deferred', mx: 'mx1.example.test' });
    expect(primary.received).toBe(0);
  });

  it('keeps a healthy destination fast while a stalled one hangs', async () => {
    mx('stalled.test', ['stalled.example.test', 10]);
    mx('example.test', ['mx1.example.test', 10]);
    const t = transmitter({ greetingTimeoutMs: 3_000, connectTimeoutMs: 3_000 });
    let hanging = 0;
    const stuck = [1, 2, 3, 4].map(() => t.deliver(job('stalled.test')).finally(() => hanging--));
    hanging = stuck.length;
    const started = Date.now();
    const healthy = await Promise.all([1, 2, 3].map(() => t.deliver(job('example.test'))));
    // Well before the stalled server's 3 s greeting timeout.
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(healthy.flat().map((r) => r.outcome.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(hanging).toBe(4);
    expect(t.stats()).toEqual({ destinations: 2, queued: 2, active: 2 });
    await Promise.all(stuck);
  });

  it('hands a job back unattempted beyond the destination queue bound, due once the queue should have drained', async () => {
    mx('stalled.test', ['stalled.example.test', 10]);
    const t = transmitter({ connectionsPerDestination: 1, queuePerDestination: 1, greetingTimeoutMs: 1_000 });
    const first = t.deliver(job('stalled.test'));
    const second = t.deliver(job('stalled.test'));
    const started = Date.now();
    const [third] = await t.deliver(job('stalled.test'));
    // Answered at once, not after the 1 s greeting timeout of the jobs ahead of it.
    expect(Date.now() - started).toBeLessThan(500);
    expect(third.outcome).toEqual({
      kind: 'deferred',
      mx: null,
      response: '451 4.4.5 Herald: destination queue full, job not attempted',
      notAttempted: true,
      queueFull: true,
      notBefore: expect.any(Date),
    });
    expect((third.outcome as { notBefore: Date }).notBefore.getTime()).toBeGreaterThanOrEqual(started + 1_000);
    await Promise.all([first, second]);
  });

  it('admits emails before their build while the destination has room, waitlists the rest and calls them back in order', async () => {
    mx('slow.test', ['plain.example.test', 10]);
    plain.behave({ delayMs: 300 });
    const t = transmitter({ connectionsPerDestination: 1, queuePerDestination: 2 });
    const called: string[][] = [];
    t.onRoom((ids) => called.push(ids));
    const jobOf = (emailId: string): DeliveryJob => ({ ...job('slow.test', [emailId]), emailId });
    const admit = async (emailId: string, domain = 'slow.test') => (await t.admit(emailId, [domain])).kind;

    // Two places (the queue bound), then a waitlist, in order, even for an email asking twice.
    expect([await admit('a'), await admit('b')]).toEqual(['admitted', 'admitted']);
    expect([await admit('c'), await admit('d'), await admit('c')]).toEqual(['waitlisted', 'waitlisted', 'waitlisted']);
    // Another destination is not held up.
    expect(await admit('e', 'example.test')).toBe('admitted');
    t.release('e');

    // a's job takes its place and starts; b's waits in the queue: one place free, c called back.
    const sent = [t.deliver(jobOf('a')), t.deliver(jobOf('b'))];
    await eventually(async () => expect(called).toEqual([['c']]));
    // Its place is kept: d still waits, c is admitted when its command comes back.
    expect(await admit('d')).toBe('waitlisted');
    expect(await admit('c')).toBe('admitted');
    sent.push(t.deliver(jobOf('c')));
    for (const [result] of await Promise.all(sent)) expect(result.outcome.kind).toBe('delivered');
    expect(called).toEqual([['c'], ['d']]);
    // A place held and not used (the email had nothing to send) is given back.
    expect(await admit('d')).toBe('admitted');
    t.release('d');
    expect([await admit('f'), await admit('g'), await admit('h')]).toEqual(['admitted', 'admitted', 'waitlisted']);
    // An email another worker called back is admitted here all the same (calls land on any worker of the region).
    expect((await t.admit('i', ['slow.test'], true)).kind).toBe('admitted');
  });

  it('backs off after three consecutive connection failures, and a success resets it', async () => {
    mx('example.test', ['flaky.example.test', 10]);
    dns.set('flaky.example.test', 'A', [DEAD]);
    const t = transmitter({ backoffInitialMs: 300 });
    for (let i = 0; i < 3; i++) {
      expect((await t.deliver(job('example.test')))[0].outcome).toMatchObject({
        kind: 'deferred',
        response: expect.stringMatching(/ECONNREFUSED|refused/i),
      });
    }
    dns.set('flaky.example.test', 'A', ['127.0.0.2']);
    const [down] = await t.deliver(job('example.test'));
    expect(down.outcome).toMatchObject({ kind: 'deferred', mx: null, response: expect.stringContaining('back-off') });
    expect(primary.connections).toBe(0);

    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await t.deliver(job('example.test')))[0].outcome).toMatchObject({ kind: 'delivered' });
  });

  it('gives domains hosted on the same MX hosts one destination (one set of limits)', async () => {
    const t = transmitter();
    mx('one.test', ['mx1.example.test', 10], ['mx2.example.test', 20]);
    mx('two.test', ['mx2.example.test', 5], ['mx1.example.test', 50]);
    mx('three.test', ['mx2.example.test', 10]);
    for (const domain of ['one.test', 'two.test', 'three.test']) {
      expect((await t.deliver(job(domain)))[0].outcome.kind).toBe('delivered');
    }
    // one.test and two.test share mx1 + mx2; three.test (mx2 alone) is another destination.
    expect(t.stats().destinations).toBe(2);
  });

  it('forgets idle destinations past maxDestinations, and keeps one that is backing off', async () => {
    const t = transmitter({ maxDestinations: 2 });
    mx('down.test', ['dead.example.test', 10]);
    for (let i = 0; i < 3; i++) await t.deliver(job('down.test'));
    mx('a.test', ['mx1.example.test', 10]);
    mx('b.test', ['mx2.example.test', 10]);
    mx('c.test', ['plain.example.test', 10]);
    await t.deliver(job('a.test'));
    expect(t.stats().destinations).toBe(2);
    // Full: the idle a.test destination makes way; the one backing off is remembered.
    await t.deliver(job('b.test'));
    await t.deliver(job('c.test'));
    expect(t.stats().destinations).toBe(2);
    const [again] = await t.deliver(job('down.test'));
    expect(again.outcome).toMatchObject({ kind: 'deferred', response: expect.stringMatching(/back/i) });
  });

  it('close() finishes the transaction in flight and hands back queued jobs unattempted', async () => {
    mx('example.test', ['mx1.example.test', 10]);
    primary.behave({ delayMs: 400 });
    const t = transmitter({ connectionsPerDestination: 1 });
    const inFlight = t.deliver(job('example.test', ['first']));
    const queued = [t.deliver(job('example.test', ['second'])), t.deliver(job('example.test', ['third']))];
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(t.stats()).toEqual({ destinations: 1, queued: 2, active: 1 });

    await t.close();
    expect((await inFlight)[0].outcome).toMatchObject({ kind: 'delivered' });
    for (const [result] of await Promise.all(queued)) expect(result.outcome).toMatchObject({ kind: 'deferred', notAttempted: true });
    expect((await t.deliver(job('example.test')))[0].outcome).toMatchObject({ kind: 'deferred', notAttempted: true });
    expect(primary.messages.map((m) => m.recipients)).toEqual([['first@example.test']]);
  });
});
