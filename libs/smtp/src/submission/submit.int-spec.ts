import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type Mail from 'nodemailer/lib/mailer';
import { DataSource } from 'typeorm';
import type { Principal } from '@herald/accounts';
import { regionOfId } from '@herald/core';
import { QuotaService } from '@herald/limits';
import { EmailStore } from '@herald/messages';
import { call, type TestApi, type TestTeam } from '../../../../test/support/api-harness';
import {
  accepted,
  authenticated as authenticate,
  compose,
  refused,
  startSubmissionSuite,
  type SubmissionSuite,
} from '../../../../test/support/smtp-submissions';
import type { SmtpSubmissionPort } from '../submission-port';

/** The end of DATA when the message is taken: what is stored, idempotency, quota, and a failed store. */
describe('SmtpSubmissions: submit', () => {
  let suite: SubmissionSuite;
  let api: TestApi;
  let smtp: SmtpSubmissionPort;
  let team: TestTeam;
  let principal: Principal;
  const authenticated = (token: string): Promise<Principal> => authenticate(smtp, token);
  let app: INestApplicationContext;
  let db: DataSource;

  const mime = async (emailId: string): Promise<string | null> => {
    const rows: { mime: Buffer }[] = await db.query(`SELECT mime FROM email_mime WHERE email_id = $1`, [emailId]);
    return rows[0]?.mime.toString('latin1') ?? null;
  };
  const emailRow = async (emailId: string) =>
    (await db.query(`SELECT source, message_id, region, idempotency_key FROM emails WHERE id = $1`, [emailId]))[0];

  beforeAll(async () => {
    suite = await startSubmissionSuite();
    ({ api, app, smtp } = suite);
    db = app.get(DataSource);
    team = await api.team();
    principal = await authenticated(team.token);
  });

  afterAll(() => suite?.close());

  it('stores the MIME message as sent minus Bcc, idempotency keys and Return-Path; Bcc from the envelope', async () => {
    const raw = await compose(
      {
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
      },
      true,
    );
    expect(raw.toString()).toContain('Bcc: bob@example.com');
    const id = accepted(
      await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['alice@example.com', 'carol@example.com', 'bob@example.com'] }, raw),
    );

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
    expect(stored).toMatch(
      new RegExp(
        `^From: ${team.from()}\r\nSubject: bare\r\nMessage-ID: <${id}@${team.domain}>\r\nDate: [A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} \\+0000\r\n\r\nbody\r\n$`,
      ),
    );
    expect(await emailRow(id)).toMatchObject({ message_id: `<${id}@${team.domain}>`, region: 'us-east-1' });
    // The id Herald gave the email, and wrote into its Message-ID, names the region that holds it.
    expect(regionOfId(id, ['eu-west-1', 'us-east-1'])).toBe('us-east-1');
    const { body } = await call(api.url, team.token, 'GET', `/emails/${id}`);
    expect(body).toMatchObject({ to: ['dan@example.com'], subject: 'bare', html: null, text: 'body\n' });
  });

  it('stores an empty subject when Subject is missing, and replaces an invalid Message-ID', async () => {
    const raw = Buffer.from(
      `From: ${team.from()}\r\nTo: erin@example.com\r\nMessage-ID: not-an-id\r\nDate: Thu, 01 Jan 2026 00:00:00 +0000\r\n\r\nhi\r\n`,
    );
    const id = accepted(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['erin@example.com'] }, raw));
    const stored = (await mime(id))!;
    expect(stored).not.toContain('not-an-id');
    expect(stored).toContain(`Message-ID: <${id}@${team.domain}>`);
    expect(stored.match(/^Date:/gm)).toHaveLength(1);
    expect((await call(api.url, team.token, 'GET', `/emails/${id}`)).body.subject).toBe('');
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
    expect(refused(await smtp.submit(principal, { ...envelope, rcptTo: ['gina@example.com'] }, await compose(options)))).toMatchObject({
      code: 550,
      enhanced: '5.7.0',
    });
  });

  it('answers 451 4.7.0 to a message whose key is in flight', async () => {
    const raw = await compose({
      from: team.from(),
      to: 'h@example.com',
      subject: 'x',
      text: 'x',
      headers: { 'Herald-Idempotency-Key': `f-${randomUUID()}` },
    });
    const envelope = { mailFrom: team.from(), rcptTo: ['h@example.com'] };
    const results = await Promise.all([smtp.submit(principal, envelope, raw), smtp.submit(principal, envelope, raw)]);
    const ids = results.filter((r) => r.ok).map((r) => (r as { id: string }).id);
    expect(ids.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ids).size).toBe(1);
    for (const r of results)
      if (!r.ok)
        expect(r.reply).toEqual({ code: 451, enhanced: '4.7.0', message: 'A message with the same idempotency key is being processed, try again' });
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
    const store = app.get(EmailStore, { strict: false });
    const spy = jest.spyOn(store, 'insert').mockRejectedValueOnce(new Error('connection lost'));
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
});
