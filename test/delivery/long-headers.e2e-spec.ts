import { simpleParser } from 'mailparser';
import { RawSmtpClient, type MxSink, type SinkMessage } from '@herald/testing';
import { RelayHost } from '@herald/smtp';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(60_000);

const SUBJECT = 'S'.repeat(10_000);
const CUSTOM = 'v'.repeat(2_000);
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** The longest line of a message, in octets, CRLF excluded. */
const longestLine = (raw: Buffer): number =>
  Math.max(
    ...raw
      .toString('latin1')
      .split('\r\n')
      .map((l) => l.length),
  );
/** A field's value as a reader decodes it: mailparser decodes the Subject field, so read it as one. */
const decoded = async (value: string): Promise<string> => (await simpleParser(`Subject: ${value}\r\n\r\n`)).subject ?? '';

/**
 * RFC 5322 §2.1.1 at the receiver: an email sent through the API with a 10,000-character
 * one-word subject and a 2,000-character custom header arrives with no line over 998 octets,
 * reads back exactly and passes DKIM; a relayed message with such a line is refused at DATA.
 */
describe('header lines over 998 octets', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;

  beforeAll(async () => {
    world = await DeliveryWorld.start();
    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
  });

  afterAll(() => world?.close());
  beforeEach(() => sink.reset());

  async function deliver(extra: Record<string, unknown>): Promise<SinkMessage> {
    const body = {
      from: `Acme <${team.from()}>`,
      to: 'long@inbox.test',
      subject: SUBJECT,
      headers: { 'X-Campaign-Data': CUSTOM },
      text: 'Hello',
      ...extra,
    };
    const { status, body: sent } = await call(world.api.url, team.token, 'POST', '/emails', body);
    expect(status).toBe(200);
    await world.waitForEvent(sent.id, 'email.delivered');
    await sink.waitForMessages(1, 10_000);
    return sink.messages[0];
  }

  it.each([
    ['without attachments (the direct writer)', {}],
    ['with an attachment (nodemailer builds the MIME tree)', { attachments: [{ filename: 'dot.png', content: PNG.toString('base64') }] }],
  ])('API email %s: no line over 998 octets, subject and header read back exactly, DKIM passes', async (_name, extra) => {
    const message = await deliver(extra);
    const longest = longestLine(message.raw);
    console.log(`delivered message: ${message.raw.length} octets, longest line ${longest} octets`);
    expect(longest).toBeLessThanOrEqual(998);
    const parsed = await simpleParser(message.raw);
    expect(parsed.subject).toBe(SUBJECT);
    expect(await decoded(String(parsed.headers.get('x-campaign-data')))).toBe(CUSTOM);
    const auth = await world.authenticateAtSink(message);
    expect(auth.dkim.results[0].status.result).toBe('pass');
    expect(auth.dmarc.status.result).toBe('pass');
  });

  it('a relayed message with such a header line is refused at the end of DATA with 550 5.6.0, and nothing is sent', async () => {
    const client = await RawSmtpClient.connect(world.smtp.get(RelayHost).port('tls'), 'tls');
    try {
      expect(await client.login(team.token, { starttls: false })).toBe('235 Authentication successful');
      expect(await client.command(`MAIL FROM:<${team.from()}>`)).toBe('250 Accepted');
      expect(await client.command('RCPT TO:<relayed@inbox.test>')).toBe('250 Accepted');
      expect(await client.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
      expect(await client.command(`From: ${team.from()}\r\nTo: relayed@inbox.test\r\nSubject: ${SUBJECT}\r\n\r\nHello\r\n.`)).toBe(
        '550 5.6.0 Message refused: a header line is 10009 octets long (Subject), RFC 5322 allows 998: fold it, or encode long words (RFC 2047)',
      );
    } finally {
      client.destroy();
    }
    const { body } = await call(world.api.url, team.token, 'GET', '/emails');
    expect(body.data.filter((e: { to: string[] }) => e.to.includes('relayed@inbox.test'))).toEqual([]);
  });
});
