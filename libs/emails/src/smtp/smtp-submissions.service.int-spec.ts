import { randomUUID } from 'node:crypto';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { DataSource } from 'typeorm';
import { ApiKeysService, type Principal } from '@herald/accounts';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { QuotaService } from '@herald/limits';
import { RuntimeModule } from '@herald/runtime';
import { SuppressionsService } from '@herald/suppressions';
import { call, markVerified, startTestApi, type TestApi, type TestTeam } from '../../../../test/support/api-harness';
import { EmailWriter } from '../email-writer';
import { SmtpSubmissionModule } from './smtp-submission.module';
import { SMTP_SUBMISSIONS, type SmtpReply, type SmtpSubmissionPort, type SubmissionResult } from './smtp-submission.types';

@Module({})
class SmtpTestRoot {}

const compose = (options: Mail.Options, keepBcc = false): Promise<Buffer> => {
  const node = new MailComposer(options).compile();
  node.keepBcc = keepBcc;
  return node.build();
};

const refused = (result: SubmissionResult): SmtpReply => {
  if (result.ok) throw new Error(`expected a refusal, got ${result.id}`);
  return result.reply;
};
const accepted = (result: SubmissionResult): string => {
  if (!result.ok) throw new Error(`refused: ${result.reply.code} ${result.reply.enhanced} ${result.reply.message}`);
  return result.id;
};

describe('SmtpSubmissions (the SMTP relay send path)', () => {
  let api: TestApi;
  let app: INestApplicationContext;
  let smtp: SmtpSubmissionPort;
  let db: DataSource;
  let team: TestTeam;
  let principal: Principal;

  const authenticated = async (token: string): Promise<Principal> => {
    const result = await smtp.authenticate('herald', token);
    if (!result.ok) throw new Error('authentication failed');
    return result.principal;
  };
  const mime = async (emailId: string): Promise<string | null> => {
    const rows: { mime: Buffer }[] = await db.query(`SELECT mime FROM email_mime WHERE email_id = $1`, [emailId]);
    return rows[0]?.mime.toString('latin1') ?? null;
  };
  const emailRow = async (emailId: string) =>
    (await db.query(`SELECT source, message_id, region, idempotency_key FROM emails WHERE id = $1`, [emailId]))[0];

  beforeAll(async () => {
    api = await startTestApi({ MAX_RECIPIENTS: '5' });
    app = await NestFactory.createApplicationContext(
      { module: SmtpTestRoot, imports: [RuntimeModule.forRole('smtp', api.config), SmtpSubmissionModule] },
      { logger: false },
    );
    await app.init();
    smtp = app.get(SMTP_SUBMISSIONS);
    db = app.get(DataSource);
    team = await api.team();
    principal = await authenticated(team.token);
  });

  afterAll(async () => {
    await app?.close();
    await api?.close();
  });

  describe('authenticate', () => {
    it('accepts the username herald with a key of either permission', async () => {
      expect((await smtp.authenticate('herald', team.token)).ok).toBe(true);
      const sending = await api.key(team.teamId, 'sending_access');
      const result = await smtp.authenticate('herald', sending);
      expect(result).toMatchObject({ ok: true, principal: { teamId: team.teamId, permission: 'sending_access' } });
    });

    it('refuses another username or a wrong key with 535 5.7.8', async () => {
      const invalid = { code: 535, enhanced: '5.7.8', message: 'Authentication credentials invalid' };
      expect(await smtp.authenticate('Herald', team.token)).toEqual({ ok: false, reply: invalid });
      expect(await smtp.authenticate('apikey', team.token)).toEqual({ ok: false, reply: invalid });
      expect(await smtp.authenticate('herald', `${team.token}x`)).toEqual({ ok: false, reply: invalid });
      expect(await smtp.authenticate('herald', 'not-a-key')).toEqual({ ok: false, reply: invalid });
    });
  });

  describe('checkMailFrom', () => {
    it('accepts an address on a verified domain', async () => {
      expect(await smtp.checkMailFrom(principal, team.from('app'))).toBeNull();
    });

    it('refuses the null sender and malformed addresses with 553 5.1.7', async () => {
      expect(await smtp.checkMailFrom(principal, '')).toMatchObject({ code: 553, enhanced: '5.1.7' });
      expect(await smtp.checkMailFrom(principal, 'no-at-sign')).toMatchObject({ code: 553, enhanced: '5.1.7' });
      expect(await smtp.checkMailFrom(principal, `a%b@${team.domain}`)).toMatchObject({ code: 553, enhanced: '5.1.7' });
    });

    it('refuses a domain the team has not verified with 550 5.7.1 naming it', async () => {
      expect(await smtp.checkMailFrom(principal, 'hi@elsewhere.test')).toEqual({
        code: 550,
        enhanced: '5.7.1',
        message: 'The elsewhere.test domain is not verified. Add and verify it with POST /domains, then send from it.',
      });
    });

    it('refuses, for a key restricted to one domain, another verified domain of the team', async () => {
      const other = await api.app.get(DomainsService).create({ teamId: team.teamId, homeRegion: 'us-east-1' }, { name: `second-${randomUUID().slice(0, 6)}.test` });
      await markVerified(api.app.get(DomainsRepository), other.id);
      const { token } = await api.app.get(ApiKeysService).create(team.teamId, { name: 'restricted', permission: 'sending_access', domain_id: team.domainId });
      const restricted = await authenticated(token);
      expect(await smtp.checkMailFrom(restricted, team.from())).toBeNull();
      expect(await smtp.checkMailFrom(principal, `hi@${other.name}`)).toBeNull();
      expect(await smtp.checkMailFrom(restricted, `hi@${other.name}`)).toEqual({
        code: 550,
        enhanced: '5.7.1',
        message: `This API key can only send from its own domain, not from ${other.name}.`,
      });
      // The From header is held to the same rule at the end of DATA.
      const raw = await compose({ from: `hi@${other.name}`, to: 'a@example.com', subject: 'x', text: 'x' });
      expect(refused(await smtp.submit(restricted, { mailFrom: team.from(), rcptTo: ['a@example.com'] }, raw))).toMatchObject({ code: 550, enhanced: '5.7.1' });
    });

    it("takes the team's API rate limit, one unit per message: 451 4.7.1 when exceeded", async () => {
      const slow = await api.team({ rateLimit: 1 });
      const p = await authenticated(slow.token);
      expect(await smtp.checkMailFrom(p, slow.from())).toBeNull();
      expect(await smtp.checkMailFrom(p, slow.from())).toEqual({ code: 451, enhanced: '4.7.1', message: 'Rate limit exceeded, try again in 1 s' });
      // Shared with the API: the REST request is refused too.
      const { status } = await call(api.url, slow.token, 'GET', '/emails');
      expect(status).toBe(429);
    });
  });

  describe('checkRecipient', () => {
    it('accepts an ordinary address', async () => {
      expect(await smtp.checkRecipient(principal, 'alice@example.com', 0)).toBeNull();
    });

    it.each([
      ['no-domain'],
      ['two@@example.com'],
      ['user%other.test@example.com'],
      ['other.test!user@example.com'],
      ['@relay.test,@mx.test:user@example.com'],
      ['@relay.test:user@example.com'],
      ['"user@other.test"@example.com'],
      ['user@[127.0.0.1]'],
      ['user@[IPv6:::1]'],
    ])('refuses %s with 553 5.1.3', async (address) => {
      expect(await smtp.checkRecipient(principal, address, 0)).toMatchObject({ code: 553, enhanced: '5.1.3' });
    });

    it('refuses recipients past MAX_RECIPIENTS with 452 4.5.3', async () => {
      expect(await smtp.checkRecipient(principal, 'alice@example.com', 4)).toBeNull();
      expect(await smtp.checkRecipient(principal, 'alice@example.com', 5)).toEqual({ code: 452, enhanced: '4.5.3', message: 'Too many recipients' });
    });

    it('refuses an address on the suppression list with 550 5.1.1', async () => {
      await api.app.get(SuppressionsService).add(team.teamId, { email: 'gone@example.com' });
      expect(await smtp.checkRecipient(principal, 'Gone@Example.com', 0)).toEqual({
        code: 550,
        enhanced: '5.1.1',
        message: '<Gone@Example.com> is on the suppression list (previous bounce or complaint)',
      });
    });
  });

  describe('submit', () => {
    it('stores the MIME message as sent minus Bcc, idempotency keys and Return-Path; Bcc from the envelope', async () => {
      const raw = await compose({
        from: `Acme <${team.from()}>`,
        to: 'Alice <alice@example.com>',
        cc: 'carol@example.com',
        bcc: 'bob@example.com',
        replyTo: 'support@acme.test',
        subject: 'Hello over SMTP',
        text: 'Hi there',
        html: '<p>Hi there</p>',
        messageId: '<client-1@acme.test>',
        headers: { 'Herald-Idempotency-Key': `k-${randomUUID()}`, 'Return-Path': '<forged@evil.test>', 'X-Campaign': 'spring' },
      }, true);
      expect(raw.toString()).toContain('Bcc: bob@example.com');
      const id = accepted(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['alice@example.com', 'carol@example.com', 'bob@example.com'] }, raw));

      const stored = (await mime(id))!;
      expect(stored).not.toMatch(/^(bcc|herald-idempotency-key|return-path):/im);
      expect(stored).toContain('X-Campaign: spring');
      expect(stored).toContain('Message-ID: <client-1@acme.test>');
      // Everything else byte for byte: the client's message with those three lines removed.
      const expected = raw
        .toString('latin1')
        .split('\r\n')
        .filter((line) => !/^(bcc|herald-idempotency-key|return-path):/i.test(line))
        .join('\r\n');
      expect(stored).toBe(expected);

      expect(await emailRow(id)).toMatchObject({ source: 'smtp', message_id: '<client-1@acme.test>', region: 'us-east-1' });
      const recipients = await db.query(`SELECT kind, address FROM email_recipients WHERE email_id = $1 ORDER BY position`, [id]);
      expect(recipients).toEqual([
        { kind: 'to', address: 'alice@example.com' },
        { kind: 'cc', address: 'carol@example.com' },
        { kind: 'bcc', address: 'bob@example.com' },
      ]);

      const { status, body } = await call(api.url, team.token, 'GET', `/emails/${id}`);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        id,
        from: `Acme <${team.from()}>`,
        to: ['Alice <alice@example.com>'],
        cc: ['carol@example.com'],
        bcc: ['bob@example.com'],
        reply_to: ['support@acme.test'],
        subject: 'Hello over SMTP',
        html: '<p>Hi there</p>',
        text: 'Hi there',
        message_id: '<client-1@acme.test>',
        last_event: expect.any(String),
      });
      const list = await call(api.url, team.token, 'GET', '/emails?limit=5');
      expect(list.body.data.map((e: { id: string }) => e.id)).toContain(id);
    });

    it('inserts Message-ID and Date when the client left them out; no To header: the envelope is To', async () => {
      const raw = Buffer.from(`From: ${team.from()}\r\nSubject: bare\r\n\r\nbody\r\n`);
      const id = accepted(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['dan@example.com'] }, raw));
      const stored = (await mime(id))!;
      expect(stored).toMatch(new RegExp(`^From: ${team.from()}\r\nSubject: bare\r\nMessage-ID: <${id}@${team.domain}>\r\nDate: [A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} \\+0000\r\n\r\nbody\r\n$`));
      expect(await emailRow(id)).toMatchObject({ message_id: `<${id}@${team.domain}>` });
      const { body } = await call(api.url, team.token, 'GET', `/emails/${id}`);
      expect(body).toMatchObject({ to: ['dan@example.com'], subject: 'bare', html: null, text: 'body\n' });
    });

    it('stores an empty subject when Subject is missing, and replaces an invalid Message-ID', async () => {
      const raw = Buffer.from(`From: ${team.from()}\r\nTo: erin@example.com\r\nMessage-ID: not-an-id\r\nDate: Thu, 01 Jan 2026 00:00:00 +0000\r\n\r\nhi\r\n`);
      const id = accepted(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['erin@example.com'] }, raw));
      const stored = (await mime(id))!;
      expect(stored).not.toContain('not-an-id');
      expect(stored).toContain(`Message-ID: <${id}@${team.domain}>`);
      expect(stored.match(/^Date:/gm)).toHaveLength(1);
      expect((await call(api.url, team.token, 'GET', `/emails/${id}`)).body.subject).toBe('');
    });

    it('refuses a message without a From header, or From on an unverified domain, with 550 5.7.1', async () => {
      const envelope = { mailFrom: team.from(), rcptTo: ['a@example.com'] };
      expect(refused(await smtp.submit(principal, envelope, Buffer.from('To: a@example.com\r\nSubject: x\r\n\r\nx\r\n')))).toMatchObject({ code: 550, enhanced: '5.7.1' });
      const twoFroms = Buffer.from(`From: ${team.from()}\r\nFrom: ${team.from('b')}\r\nTo: a@example.com\r\n\r\nx\r\n`);
      expect(refused(await smtp.submit(principal, envelope, twoFroms))).toMatchObject({ code: 550, enhanced: '5.7.1' });
      const raw = await compose({ from: 'hi@unverified.test', to: 'a@example.com', subject: 'x', text: 'x' });
      expect(refused(await smtp.submit(principal, envelope, raw))).toEqual({
        code: 550,
        enhanced: '5.7.1',
        message: 'The unverified.test domain is not verified. Add and verify it with POST /domains, then send from it.',
      });
    });

    it('refuses an invalid idempotency key with 550 5.6.0', async () => {
      const raw = await compose({ from: team.from(), to: 'a@example.com', subject: 'x', text: 'x', headers: { 'Herald-Idempotency-Key': 'k'.repeat(257) } });
      expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['a@example.com'] }, raw))).toMatchObject({ code: 550, enhanced: '5.6.0' });
    });

    it('refuses a header line over 998 octets with 550 5.6.0 (RFC 5322 §2.1.1), takes one of 998 and a long field folded', async () => {
      const envelope = { mailFrom: team.from(), rcptTo: ['a@example.com'] };
      const message = (...fields: string[]) => Buffer.from(`From: ${team.from()}\r\nTo: a@example.com\r\n${fields.join('\r\n')}\r\n\r\nbody\r\n`);
      expect(refused(await smtp.submit(principal, envelope, message(`Subject: ${'s'.repeat(10_000)}`)))).toEqual({
        code: 550,
        enhanced: '5.6.0',
        message: 'Message refused: a header line is 10009 octets long (Subject), RFC 5322 allows 998: fold it, or encode long words (RFC 2047)',
      });
      expect(refused(await smtp.submit(principal, envelope, message('Subject: x', `X-Data: ok\r\n ${'v'.repeat(2_000)}`)))).toMatchObject({
        code: 550,
        message: expect.stringMatching(/^Message refused: a header line is 2001 octets long \(X-Data\)/),
      });
      accepted(await smtp.submit(principal, envelope, message(`Subject: ${'s'.repeat(998 - 'Subject: '.length)}`)));
      accepted(await smtp.submit(principal, envelope, message('Subject: x', `X-Data: ${Array.from({ length: 20 }, () => 'w'.repeat(900)).join('\r\n ')}`)));
    });

    it('replays a repeated message with the same key (even composed again), refuses a different one with 550 5.7.0', async () => {
      const key = `smtp-${randomUUID()}`;
      const options: Mail.Options = {
        from: team.from(),
        to: 'frank@example.com',
        subject: 'Receipt',
        html: '<p>Paid</p>',
        attachments: [{ filename: 'receipt.txt', content: 'paid' }],
        headers: { 'Resend-Idempotency-Key': key },
      };
      const envelope = { mailFrom: team.from(), rcptTo: ['frank@example.com'] };
      const first = accepted(await smtp.submit(principal, envelope, await compose(options)));
      // A new compose: new MIME boundary, Message-ID and Date, same message.
      expect(accepted(await smtp.submit(principal, envelope, await compose(options)))).toBe(first);
      const withHeraldHeader = await compose({ ...options, headers: { 'Herald-Idempotency-Key': key } });
      expect(accepted(await smtp.submit(principal, envelope, withHeraldHeader))).toBe(first);
      expect(await db.query(`SELECT id FROM emails WHERE team_id = $1 AND idempotency_key = $2`, [team.teamId, key])).toEqual([{ id: first }]);
      expect(await mime(first)).not.toMatch(/idempotency-key/i);

      expect(refused(await smtp.submit(principal, envelope, await compose({ ...options, subject: 'Another' })))).toEqual({
        code: 550,
        enhanced: '5.7.0',
        message: 'The idempotency key was already used with a different message; use a new key',
      });
      expect(refused(await smtp.submit(principal, { ...envelope, rcptTo: ['gina@example.com'] }, await compose(options)))).toMatchObject({ code: 550, enhanced: '5.7.0' });
    });

    it('answers 451 4.7.0 to a message whose key is in flight', async () => {
      const raw = await compose({ from: team.from(), to: 'h@example.com', subject: 'x', text: 'x', headers: { 'Herald-Idempotency-Key': `f-${randomUUID()}` } });
      const envelope = { mailFrom: team.from(), rcptTo: ['h@example.com'] };
      const results = await Promise.all([smtp.submit(principal, envelope, raw), smtp.submit(principal, envelope, raw)]);
      const ids = results.filter((r) => r.ok).map((r) => (r as { id: string }).id);
      expect(ids.length).toBeGreaterThanOrEqual(1);
      expect(new Set(ids).size).toBe(1);
      for (const r of results) if (!r.ok) expect(r.reply).toEqual({ code: 451, enhanced: '4.7.0', message: 'A message with the same idempotency key is being processed, try again' });
    });

    it('counts one quota unit per recipient and answers 451 4.7.1 when the daily quota is exceeded', async () => {
      const free = await api.team({ plan: 'free' });
      const p = await authenticated(free.token);
      const quota = api.app.get(QuotaService);
      const raw = await compose({ from: free.from(), to: 'a@example.com', subject: 'x', text: 'x' });
      accepted(await smtp.submit(p, { mailFrom: free.from(), rcptTo: ['a@example.com', 'b@example.com', 'c@example.com'] }, raw));
      expect((await quota.usage(free.teamId, 'free')).daily.used).toBe(3);
      await quota.reserve(free.teamId, 'free', 97);
      const reply = refused(await smtp.submit(p, { mailFrom: free.from(), rcptTo: ['a@example.com'] }, raw));
      expect(reply).toMatchObject({ code: 451, enhanced: '4.7.1' });
      expect(reply.message).toMatch(/^Daily quota exceeded: /);
      expect((await quota.usage(free.teamId, 'free')).daily.used).toBe(100);
    });

    it('answers 451 4.3.0 when the email cannot be stored, and gives the quota back', async () => {
      const t = await api.team({ plan: 'free' });
      const p = await authenticated(t.token);
      const writer = app.get(EmailWriter, { strict: false });
      const spy = jest.spyOn(writer, 'insert').mockRejectedValueOnce(new Error('connection lost'));
      try {
        const raw = await compose({ from: t.from(), to: 'a@example.com', subject: 'x', text: 'x' });
        expect(refused(await smtp.submit(p, { mailFrom: t.from(), rcptTo: ['a@example.com'] }, raw))).toEqual({
          code: 451,
          enhanced: '4.3.0',
          message: 'Temporary failure storing the message, try again later',
        });
      } finally {
        spy.mockRestore();
      }
      expect((await api.app.get(QuotaService).usage(t.teamId, 'free')).daily.used).toBe(0);
    });

    it('refuses too many envelope recipients (452 4.5.3), none (554 5.5.1) and oversized messages (552 5.3.4)', async () => {
      const raw = await compose({ from: team.from(), to: 'a@example.com', subject: 'x', text: 'x' });
      const six = ['a', 'b', 'c', 'd', 'e', 'f'].map((l) => `${l}@example.com`);
      expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: six }, raw))).toEqual({ code: 452, enhanced: '4.5.3', message: 'Too many recipients' });
      expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: [] }, raw))).toMatchObject({ code: 554, enhanced: '5.5.1' });
      const big = Buffer.concat([raw, Buffer.alloc(api.config.MAX_EMAIL_BYTES, 0x61)]);
      expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['a@example.com'] }, big))).toMatchObject({ code: 552, enhanced: '5.3.4' });
    });
  });
});
