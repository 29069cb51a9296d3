import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { createTransport } from 'nodemailer';
import { RelayHost } from '@herald/smtp';
import { RawSmtpClient, type MxSink } from '@herald/testing';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(60_000);
const run = promisify(execFile);

/**
 * The SMTP relay end to end with real clients (nodemailer in both TLS modes, swaks, Python's
 * smtplib, a raw socket): api, smtp and worker roles in this process, a local DNS server and an
 * MX sink standing in for the recipients' server.
 */
describe('SMTP relay: clients → relay → worker → recipient MX', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;
  let relay: RelayHost;

  beforeAll(async () => {
    world = await DeliveryWorld.start();
    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    relay = world.smtp.get(RelayHost);
  });

  afterAll(() => world?.close());
  beforeEach(() => sink.reset());

  const transport = (mode: 'tls' | 'starttls', pass = team.token) =>
    createTransport({
      host: '127.0.0.1',
      port: relay.port(mode),
      secure: mode === 'tls',
      requireTLS: mode === 'starttls',
      auth: { user: 'herald', pass },
      tls: { rejectUnauthorized: false },
    });
  const idOf = (response: string) => /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec(response.trim())?.[1];

  it.each(['tls', 'starttls'] as const)('nodemailer (%s): 250 with the id, the email in GET /emails, delivered to the MX', async (mode) => {
    const info = await transport(mode).sendMail({
      from: `Acme <${team.from()}>`,
      to: `a-${mode}@inbox.test`,
      subject: `Hi over ${mode}`,
      text: 'Hello',
    });
    const id = idOf(info.response);
    expect(id).toBeDefined();
    const { body } = await call(world.api.url, team.token, 'GET', `/emails/${id}`);
    expect(body).toMatchObject({ id, subject: `Hi over ${mode}`, to: [`a-${mode}@inbox.test`] });
    // The relay stores the message as sent; its text body is parsed from the MIME when it is read.
    expect(body.text).toMatch(/^Hello\s*$/);
    await world.waitForEvent(id!, 'email.delivered');
    expect(sink.messages.map((m) => m.recipients)).toEqual([[`a-${mode}@inbox.test`]]);
  });

  it('keeps attachments and an inline image intact, takes Bcc from the envelope, and the delivered copy passes DKIM', async () => {
    const pdf = Buffer.from('%PDF-1.4 fake pdf bytes \u0000\u0001', 'latin1');
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
    const info = await transport('starttls').sendMail({
      from: team.from(),
      to: 'rcpt@inbox.test',
      bcc: 'hidden@inbox.test',
      subject: 'Report',
      html: '<p>See <img src="cid:logo@acme"></p>',
      text: 'See the report',
      headers: { 'X-Entity-Ref-ID': 'ref-9', 'Herald-Idempotency-Key': 'relay-attach-1' },
      attachments: [
        { filename: 'report.pdf', content: pdf },
        { filename: 'logo.png', content: png, cid: 'logo@acme' },
      ],
    });
    const id = idOf(info.response)!;
    await world.waitForEvent(id, 'email.delivered');
    expect(sink.messages).toHaveLength(1);
    const [message] = sink.messages;
    expect(message.recipients.sort()).toEqual(['hidden@inbox.test', 'rcpt@inbox.test']);

    const parsed = await simpleParser(message.raw);
    expect(parsed.headers.get('bcc')).toBeUndefined();
    expect(parsed.headers.get('herald-idempotency-key')).toBeUndefined();
    expect(parsed.headers.get('x-entity-ref-id')).toBe('ref-9');
    // mailparser inlines cid: images into data: URLs, so look at the bytes for the reference.
    expect(message.raw.toString('latin1')).toContain('cid:logo@acme');
    const attachments = parsed.attachments.map((a) => [a.filename, a.cid ?? null, a.content.equals(a.filename === 'report.pdf' ? pdf : png)]);
    expect(attachments.sort()).toEqual([
      ['logo.png', 'logo@acme', true],
      ['report.pdf', null, true],
    ]);
    const auth: any = await world.authenticateAtSink(message);
    expect(auth.dkim.results[0].status.result).toBe('pass');
    expect(auth.dmarc.status.result).toBe('pass');
  });

  it('swaks (STARTTLS, AUTH LOGIN) gets the same 250 and the email arrives', async () => {
    const { stdout } = await run('swaks', [
      '--server',
      `127.0.0.1:${relay.port('starttls')}`,
      '--tls',
      '--auth',
      'LOGIN',
      '--auth-user',
      'herald',
      '--auth-password',
      team.token,
      '--from',
      team.from(),
      '--to',
      'swaks@inbox.test',
      '--header',
      'Subject: via swaks',
      '--body',
      'hello from swaks',
    ]);
    const id = /<~\s+250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(stdout)?.[1];
    expect(id).toBeDefined();
    await world.waitForEvent(id!, 'email.delivered');
    expect(sink.messages.map((m) => m.recipients)).toEqual([['swaks@inbox.test']]);
  });

  it("Python's smtplib (implicit TLS): 250, and a per-recipient 550 for a suppressed address while the others are accepted", async () => {
    await call(world.api.url, team.token, 'POST', '/suppressions', { email: 'gone@inbox.test' });
    const script = `
import smtplib, ssl, sys
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
s = smtplib.SMTP_SSL('127.0.0.1', ${relay.port('tls')}, context=ctx)
s.login('herald', sys.argv[1])
s.mail('${team.from()}')
print('rcpt1', s.rcpt('py@inbox.test'))
print('rcpt2', s.rcpt('gone@inbox.test'))
print('data', s.data(b'From: ${team.from()}\\r\\nTo: py@inbox.test\\r\\nSubject: via python\\r\\n\\r\\nhello\\r\\n'))
s.quit()`;
    const { stdout } = await run('python3', ['-c', script, team.token]);
    expect(stdout).toContain('rcpt1 (250,');
    expect(stdout).toMatch(/rcpt2 \(550, b'5\.1\.1 <?gone@inbox\.test>? is on the suppression list/);
    const id = /data \(250, b'2\.0\.0 OK ([0-9a-f-]{36})'\)/.exec(stdout)?.[1];
    expect(id).toBeDefined();
    await world.waitForEvent(id!, 'email.delivered');
    expect(sink.messages.map((m) => m.recipients)).toEqual([['py@inbox.test']]);
  });

  /** A raw session on the STARTTLS port, authenticated. */
  const session = async (): Promise<RawSmtpClient> => {
    const client = await RawSmtpClient.connect(relay.port('starttls'), 'starttls');
    await client.command('EHLO client.test');
    await client.startTls();
    await client.command('EHLO client.test');
    return client;
  };

  it('answers each refusal in SMTP terms: 535, 530, 550 5.7.1 for an unverified domain, 553 for a malformed recipient', async () => {
    const anonymous = await session();
    expect(await anonymous.command('MAIL FROM:<x@outside.test>')).toMatch(/^530 5\.7\.0 /);
    expect(await anonymous.command(`AUTH PLAIN ${Buffer.from(`\u0000herald\u0000hr_wrong`).toString('base64')}`)).toMatch(/^535 5\.7\.8 /);
    anonymous.destroy();

    const client = await session();
    expect(await client.login(team.token, { starttls: true })).toMatch(/^235 /);
    expect(await client.command('MAIL FROM:<someone@not-ours.test>')).toMatch(/^550 5\.7\.1 The not-ours\.test domain is not verified/);
    expect(await client.command(`MAIL FROM:<${team.from()}>`)).toMatch(/^250 /);
    expect(await client.command('RCPT TO:<bad address@inbox.test>')).toMatch(/^(553|501) /);
    client.destroy();
  });

  it('is not an open relay: unauthenticated, % hack, source route, quoted local part with @, IP literal are all refused', async () => {
    const anonymous = await RawSmtpClient.connect(relay.port('starttls'), 'starttls');
    await anonymous.command('EHLO client.test');
    // Unauthenticated, even without TLS: nothing is relayed.
    expect(await anonymous.command('MAIL FROM:<a@outside.test>')).toMatch(/^530 5\.7\.0 /);
    // No transaction was opened, so a recipient is refused too (no MAIL yet, or no auth).
    expect(await anonymous.command('RCPT TO:<b@elsewhere.test>')).toMatch(/^(530 5\.7\.0|503) /);
    anonymous.destroy();

    const client = await session();
    await client.login(team.token, { starttls: true });
    expect(await client.command(`MAIL FROM:<${team.from()}>`)).toMatch(/^250 /);
    for (const trick of [
      'victim%elsewhere.test@inbox.test',
      '@inbox.test,@relay.test:victim@elsewhere.test',
      '"victim@elsewhere.test"@inbox.test',
      'victim@[192.0.2.1]',
    ]) {
      expect(`${trick} → ${await client.command(`RCPT TO:<${trick}>`)}`).toMatch(
        new RegExp(`^${trick.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} → (553|501) `),
      );
    }
    client.destroy();
  });

  it('refuses a smuggling attempt whole: the sink never sees a second (or any) message from it', async () => {
    const client = await session();
    await client.login(team.token, { starttls: true });
    expect(await client.command(`MAIL FROM:<${team.from()}>`)).toMatch(/^250 /);
    expect(await client.command('RCPT TO:<smuggle@inbox.test>')).toMatch(/^250 /);
    expect(await client.command('DATA')).toMatch(/^354 /);
    client.write(
      `From: ${team.from()}\r\nTo: smuggle@inbox.test\r\nSubject: first\r\n\r\nbody\n.\r\nMAIL FROM:<${team.from()}>\r\nRCPT TO:<smuggled@inbox.test>\r\nDATA\r\nSubject: smuggled\r\n\r\nevil\r\n.\r\n`,
    );
    expect(await client.reply()).toMatch(/^550 5\.6\.11 /);
    // The session is still in step: a clean message afterwards is accepted, alone.
    expect(await client.command(`MAIL FROM:<${team.from()}>`)).toMatch(/^250 /);
    expect(await client.command('RCPT TO:<clean@inbox.test>')).toMatch(/^250 /);
    expect(await client.command('DATA')).toMatch(/^354 /);
    client.write(`From: ${team.from()}\r\nTo: clean@inbox.test\r\nSubject: clean\r\n\r\nok\r\n.\r\n`);
    const id = idOf(await client.reply());
    client.destroy();
    await world.waitForEvent(id!, 'email.delivered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sink.messages.map((m) => m.recipients)).toEqual([['clean@inbox.test']]);
  });

  it('a replayed Herald-Idempotency-Key gets the first id and sends nothing twice', async () => {
    const mail = {
      from: team.from(),
      to: 'once@inbox.test',
      subject: 'Once',
      text: 'only once',
      headers: { 'Resend-Idempotency-Key': 'relay-once-1' },
    };
    const first = idOf((await transport('tls').sendMail(mail)).response);
    const second = idOf((await transport('starttls').sendMail(mail)).response);
    expect(second).toBe(first);
    await world.waitForEvent(first!, 'email.delivered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sink.messages.map((m) => m.recipients)).toEqual([['once@inbox.test']]);
  });
});
