import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { SmtpSubmissionPort } from '@herald/smtp';
import type { MxSink } from '@herald/testing';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { smtpSubmissionsOf } from '../support/smtp-submissions';

jest.setTimeout(60_000);

/** The part of a message after its header block. */
const bodyOf = (message: Buffer): Buffer => message.subarray(message.indexOf('\r\n\r\n') + 4);

describe('an email submitted over SMTP (SmtpSubmissions → worker → MX sink)', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;
  let smtp: SmtpSubmissionPort;

  beforeAll(async () => {
    world = await DeliveryWorld.start();
    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    smtp = smtpSubmissionsOf(world.api.app);
  });

  afterAll(() => world?.close());

  it('arrives with its body byte for byte, attachments and inline image intact, without Bcc, passing DKIM', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const node = new MailComposer({
      from: `Acme <${team.from()}>`,
      to: 'Alice <alice@inbox.test>',
      bcc: 'bob@inbox.test',
      subject: 'Your report',
      text: 'See the attached report.',
      html: '<p>See the attached report.</p><img src="cid:logo@acme">',
      headers: { 'X-Report': '42', 'Herald-Idempotency-Key': 'report-42' },
      attachments: [
        { filename: 'report.pdf', content: Buffer.from('%PDF-1.4 fake report\n'.repeat(200)), contentType: 'application/pdf' },
        { filename: 'logo.png', content: png, cid: 'logo@acme', contentType: 'image/png' },
      ],
    }).compile();
    node.keepBcc = true;
    const raw = await node.build();

    const auth = await smtp.authenticate('herald', team.token);
    if (!auth.ok) throw new Error('authentication failed');
    const principal = auth.principal;
    expect(await smtp.checkMailFrom(principal, team.from())).toBeNull();
    expect(await smtp.checkRecipient(principal, 'alice@inbox.test', 0)).toBeNull();
    expect(await smtp.checkRecipient(principal, 'bob@inbox.test', 1)).toBeNull();
    const result = await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['alice@inbox.test', 'bob@inbox.test'] }, raw);
    if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.reply)}`);

    await world.waitForEvent(result.id, 'email.delivered');
    await sink.waitForMessages(1, 10_000);
    const [message] = sink.messages;
    expect(message.recipients.sort()).toEqual(['alice@inbox.test', 'bob@inbox.test']);

    expect(bodyOf(message.raw).equals(bodyOf(raw))).toBe(true);
    const header = message.raw.subarray(0, message.raw.indexOf('\r\n\r\n')).toString('latin1');
    expect(header).not.toMatch(/^(bcc|herald-idempotency-key):/im);
    expect(header).toMatch(/^X-Report: 42$/m);

    const parsed = await simpleParser(message.raw);
    expect(parsed.subject).toBe('Your report');
    const attachments = Object.fromEntries(parsed.attachments.map((a) => [a.filename, a]));
    expect(Object.keys(attachments).sort()).toEqual(['logo.png', 'report.pdf']);
    expect(attachments['report.pdf']).toMatchObject({ contentType: 'application/pdf', size: 21 * 200 });
    expect(attachments['logo.png']).toMatchObject({ contentType: 'image/png', cid: 'logo@acme', related: true });
    expect(attachments['logo.png'].content.equals(png)).toBe(true);

    const verdict: any = await world.authenticateAtSink(message);
    expect(verdict.dkim.results[0].status.result).toBe('pass');
    expect(verdict.dkim.results[0].signingDomain).toBe(team.domain);
    expect(verdict.dmarc.status.result).toBe('pass');

    const { body } = await call(world.api.url, team.token, 'GET', `/emails/${result.id}`);
    expect(body).toMatchObject({
      id: result.id,
      last_event: 'delivered',
      to: ['Alice <alice@inbox.test>'],
      bcc: ['bob@inbox.test'],
      subject: 'Your report',
    });
    expect((await world.events(result.id)).map((e) => e.type)).toEqual(['email.sent', 'email.delivered']);
  });
});
