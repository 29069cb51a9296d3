import { createTransport } from 'nodemailer';
import type { MxSink } from '@herald/testing';
import { call } from '../support/api-harness';
import { DEAD_HOST, DeliveryWorld } from '../support/delivery-world';
import { complaintAbout } from '../support/report-fixtures';
import type { TestTeam } from '../support/api-harness';

jest.setTimeout(60_000);

describe('delivery engine (api → JetStream → worker → MX sinks)', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let main: MxSink;
  let backup: MxSink;

  beforeAll(async () => {
    world = await DeliveryWorld.start({ DELIVERY_EXPIRY_SECONDS: '6' });
    team = await world.team();
    main = await world.sink();
    backup = await world.sink({ starttls: false });
    world.route('inbox.test', { host: 'mx.inbox.test', address: main.host });
  });

  afterAll(() => world?.close());

  beforeEach(() => {
    main.reset();
    backup.reset();
  });

  const send = async (to: string | string[], extra: Record<string, unknown> = {}) => {
    const { data, error } = await team.resend.emails.send({
      from: `Acme <${team.from()}>`,
      to,
      subject: 'Hello',
      html: '<p>Hi</p>',
      text: 'Hi',
      ...extra,
    } as never);
    if (error) throw new Error(JSON.stringify(error));
    return data!.id;
  };

  it('delivers a DKIM-signed email that passes DKIM, SPF and DMARC in mailauth, over STARTTLS', async () => {
    const id = await send('alice@inbox.test', { headers: { 'List-Unsubscribe': '<https://acme.test/u/1>' } });
    await main.waitForMessages(1, 10_000);
    const [message] = main.messages;
    expect(message.recipients).toEqual(['alice@inbox.test']);
    expect(message.secure).toBe(true);
    expect(message.clientHostname).toBe('mta.us-east-1.herald.test');
    expect(message.envelopeFrom).toMatch(new RegExp(`^b-[0-9a-f]{32}-[a-z2-7]{10}@send\\.${team.domain.replace(/\./g, '\\.')}$`));

    const auth: any = await world.authenticateAtSink(message);
    expect(auth.dkim.results[0].status.result).toBe('pass');
    expect(auth.dkim.results[0].signingHeaders.keys.toLowerCase()).toContain('list-unsubscribe');
    expect(auth.spf.status.result).toBe('pass');
    expect(auth.dmarc.status.result).toBe('pass');

    const events = await world.waitForEvent(id, 'email.delivered');
    expect(events.map((e) => e.type)).toEqual(['email.sent', 'email.delivered']);
    expect(events[1].data).toMatchObject({ email_id: id, to: ['alice@inbox.test'], subject: 'Hello', from: `Acme <${team.from()}>` });
    const { body } = await call(world.api.url, team.token, 'GET', `/emails/${id}`);
    expect(body.last_event).toBe('delivered');
    expect(await world.recipients(id)).toEqual([
      expect.objectContaining({ address: 'alice@inbox.test', status: 'delivered', attempts: 1, mx: 'mx.inbox.test' }),
    ]);
  });

  it('tries MX hosts by preference and moves to the next when one refuses connections', async () => {
    world.route(
      'pref.test',
      { host: 'mx1.pref.test', priority: 10, address: DEAD_HOST },
      { host: 'mx2.pref.test', priority: 20, address: backup.host },
    );
    const id = await send('bob@pref.test');
    await world.waitForEvent(id, 'email.delivered');
    expect(backup.messages.map((m) => m.recipients)).toEqual([['bob@pref.test']]);
    expect((await world.recipients(id))[0].mx).toBe('mx2.pref.test');
  });

  it('falls back to the A record of a domain without MX', async () => {
    world.dns.set('plain.test', 'A', [backup.host]);
    const id = await send('carol@plain.test');
    await world.waitForEvent(id, 'email.delivered');
    expect(backup.messages.map((m) => m.recipients)).toEqual([['carol@plain.test']]);
  });

  it('bounces at once for a null MX, without connecting anywhere', async () => {
    world.dns.set('nomail.test', 'MX', [{ exchange: '.', priority: 0 }]);
    const id = await send('dan@nomail.test');
    const events = await world.waitForEvent(id, 'email.bounced');
    expect(events.find((e) => e.type === 'email.bounced')!.data.bounce).toMatchObject({ type: 'Permanent', subType: 'General' });
    expect(await world.lastEvent(id)).toBe('bounced');
  });

  it('defers on 4xx, announces the delay once, retries and delivers', async () => {
    main.behave({ defer: '451 4.7.1 try again later' });
    const id = await send('erin@inbox.test');
    await world.waitForEvent(id, 'email.delivery_delayed');
    expect(await world.lastEvent(id)).toBe('delivery_delayed');
    main.behave('accept');
    const events = await world.waitForEvent(id, 'email.delivered');
    expect(events.filter((e) => e.type === 'email.delivery_delayed')).toHaveLength(1);
    expect(events.at(-1)!.type).toBe('email.delivered');
    const [recipient] = await world.recipients(id);
    expect(recipient.attempts).toBeGreaterThanOrEqual(2);
    expect(main.messages).toHaveLength(1);
  });

  it('gets through greylisting on the retry', async () => {
    main.behave('greylist');
    const id = await send('fay@inbox.test');
    const events = await world.waitForEvent(id, 'email.delivered');
    expect(events.map((e) => e.type)).toEqual(['email.sent', 'email.delivery_delayed', 'email.delivered']);
    expect((await world.recipients(id))[0].attempts).toBe(2);
  });

  it('bounces (Transient) once the retry window has passed', async () => {
    // A destination of its own: repeated 421s suspend it (the other tests' mx.inbox.test must stay up).
    // The sink without STARTTLS: on a busy machine a TLS handshake past the greeting timeout was
    // the last failure recorded, instead of the 421 this test is about.
    world.route('closing.test', { host: 'mx.closing.test', address: backup.host });
    backup.behave({ defer: '421 4.3.2 system not accepting messages' });
    const id = await send('gus@closing.test');
    const events = await world.waitForEvent(id, 'email.bounced', 20_000);
    const bounce = events.find((e) => e.type === 'email.bounced')!.data.bounce;
    expect(bounce).toMatchObject({ type: 'Transient', subType: 'General' });
    expect(bounce.diagnosticCode[0]).toContain('421');
    expect(await world.lastEvent(id)).toBe('bounced');
  });

  it('suppresses a hard-bounced address; the next email to it is not attempted', async () => {
    main.recipientRule('hank@inbox.test', { reject: '550 5.1.1 user unknown' });
    const first = await send(['hank@inbox.test', 'ida@inbox.test']);
    const events = await world.waitForEvent(first, 'email.bounced');
    const bounced = events.find((e) => e.type === 'email.bounced')!;
    expect(bounced.recipients).toEqual(['hank@inbox.test']);
    expect(bounced.data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail', diagnosticCode: [expect.stringContaining('550 5.1.1')] });
    expect(main.messages.map((m) => m.recipients)).toEqual([['ida@inbox.test']]);
    const statuses = Object.fromEntries((await world.recipients(first)).map((r) => [r.address, r.status]));
    expect(statuses).toEqual({ 'hank@inbox.test': 'bounced', 'ida@inbox.test': 'delivered' });

    // Recorded in the bounce's own transaction: visible as soon as the bounce is.
    const { body } = await call(world.api.url, team.token, 'GET', '/suppressions/hank@inbox.test');
    expect(body).toMatchObject({ email: 'hank@inbox.test', origin: 'bounce', source_id: first });

    const second = await send('hank@inbox.test');
    const later = await world.waitForEvent(second, 'email.suppressed');
    expect(later.find((e) => e.type === 'email.suppressed')!.data.suppressed).toMatchObject({
      type: 'OnAccountSuppressionList',
      reason: 'previous_bounce',
    });
    expect(await world.lastEvent(second)).toBe('suppressed');
    expect(main.messages).toHaveLength(1);
  });

  it('turns a DSN and a complaint report sent to the bounce MX into bounced and complained for the right recipient', async () => {
    const id = await send(['jan@inbox.test', 'kim@inbox.test']);
    await world.waitForEvent(id, 'email.delivered');
    const verp = main.messages[0].envelopeFrom;
    const mx = createTransport({ host: '127.0.0.1', port: world.bounceMxPort(), ignoreTLS: true });
    await mx.sendMail({ envelope: { from: '', to: [verp] }, raw: dsn(verp, 'kim@inbox.test') });
    const events = await world.waitForEvent(id, 'email.bounced');
    const bounced = events.find((e) => e.type === 'email.bounced')!;
    expect(bounced.recipients).toEqual(['kim@inbox.test']);
    expect(bounced.data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail' });

    await mx.sendMail({ envelope: { from: 'fbl@isp.test', to: [verp] }, raw: complaintAbout(verp, 'jan@inbox.test') });
    const after = await world.waitForEvent(id, 'email.complained');
    expect(after.find((e) => e.type === 'email.complained')!.recipients).toEqual(['jan@inbox.test']);
    expect(await world.lastEvent(id)).toBe('complained');
    const { body } = await call(world.api.url, team.token, 'GET', '/suppressions/jan@inbox.test');
    expect(body).toMatchObject({ origin: 'complaint', source_id: id });

    // The same DSN again records nothing new.
    await mx.sendMail({ envelope: { from: '', to: [verp] }, raw: dsn(verp, 'kim@inbox.test') });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await world.events(id)).filter((e) => e.type === 'email.bounced')).toHaveLength(1);
  });

  it('simulates the test addresses through the real pipeline, without leaving the machine', async () => {
    const id = await send(['delivered@herald.test', 'bounced@herald.test', 'complained+x@herald.test', 'suppressed@herald.test']);
    const events = await world.waitForEvent(id, 'email.complained');
    const byType = (type: string) => events.filter((e) => e.type === type).flatMap((e) => e.recipients);
    expect(byType('email.delivered').sort()).toEqual(['complained+x@herald.test', 'delivered@herald.test']);
    expect(byType('email.bounced')).toEqual(['bounced@herald.test']);
    expect(byType('email.complained')).toEqual(['complained+x@herald.test']);
    expect(byType('email.suppressed')).toEqual(['suppressed@herald.test']);
    const { body } = await call(world.api.url, team.token, 'GET', '/suppressions/bounced@herald.test');
    expect(body.name).toBe('not_found');
  });

  it('does not let a stalled destination slow a healthy one', async () => {
    const stalled = await world.sink();
    stalled.behave('stall');
    world.route('slow.test', { host: 'mx.slow.test', address: stalled.host });
    const slowIds = await Promise.all(Array.from({ length: 5 }, (_, i) => send(`u${i}@slow.test`)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    const fast = await send('lou@inbox.test');
    await world.waitForEvent(fast, 'email.delivered');
    const elapsed = Date.now() - started;
    // The stalled MX holds its connections for the whole greeting timeout (1 s here).
    expect(elapsed).toBeLessThan(900);
    for (const id of slowIds) expect((await world.events(id)).map((e) => e.type)).not.toContain('email.delivered');
    for (const id of slowIds) await world.waitForEvent(id, 'email.delivery_delayed');
  });
});

function dsn(verp: string, recipient: string): Buffer {
  return Buffer.from(
    [
      `From: MAILER-DAEMON@mx.inbox.test`,
      `To: ${verp}`,
      `Subject: Undelivered Mail Returned to Sender`,
      `MIME-Version: 1.0`,
      `Content-Type: multipart/report; report-type=delivery-status; boundary="b1"`,
      ``,
      `--b1`,
      `Content-Type: text/plain`,
      ``,
      `The mailbox does not exist.`,
      `--b1`,
      `Content-Type: message/delivery-status`,
      ``,
      `Reporting-MTA: dns; mx.inbox.test`,
      ``,
      `Final-Recipient: rfc822; ${recipient}`,
      `Action: failed`,
      `Status: 5.1.1`,
      `Diagnostic-Code: smtp; 550 5.1.1 <${recipient}>: Recipient address rejected: User unknown`,
      ``,
      `--b1--`,
      ``,
    ].join('\r\n'),
  );
}
