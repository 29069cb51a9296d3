import type { Principal } from '@herald/accounts';
import type { TestApi, TestTeam } from '../../../../test/support/api-harness';
import {
  accepted,
  authenticated as authenticate,
  compose,
  refused,
  startSubmissionSuite,
  type SubmissionSuite,
} from '../../../../test/support/smtp-submissions';
import type { SmtpSubmissionPort } from '../submission-port';

/** The end of DATA when the message is refused: its From, its idempotency key, its header lines, its envelope and size. */
describe('SmtpSubmissions: submit refusals', () => {
  let suite: SubmissionSuite;
  let api: TestApi;
  let smtp: SmtpSubmissionPort;
  let team: TestTeam;
  let principal: Principal;
  const authenticated = (token: string): Promise<Principal> => authenticate(smtp, token);

  beforeAll(async () => {
    suite = await startSubmissionSuite({ MAX_RECIPIENTS: '5' });
    ({ api, smtp } = suite);
    team = await api.team();
    principal = await authenticated(team.token);
  });

  afterAll(() => suite?.close());

  it('refuses a message without a From header, or From on an unverified domain, with 550 5.7.1', async () => {
    const envelope = { mailFrom: team.from(), rcptTo: ['a@example.com'] };
    expect(refused(await smtp.submit(principal, envelope, Buffer.from('To: a@example.com\r\nSubject: x\r\n\r\nx\r\n')))).toMatchObject({
      code: 550,
      enhanced: '5.7.1',
    });
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
    const raw = await compose({
      from: team.from(),
      to: 'a@example.com',
      subject: 'x',
      text: 'x',
      headers: { 'Herald-Idempotency-Key': 'k'.repeat(257) },
    });
    expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['a@example.com'] }, raw))).toMatchObject({
      code: 550,
      enhanced: '5.6.0',
    });
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
    accepted(
      await smtp.submit(principal, envelope, message('Subject: x', `X-Data: ${Array.from({ length: 20 }, () => 'w'.repeat(900)).join('\r\n ')}`)),
    );
  });

  it('refuses too many envelope recipients (452 4.5.3), none (554 5.5.1) and oversized messages (552 5.3.4)', async () => {
    const raw = await compose({ from: team.from(), to: 'a@example.com', subject: 'x', text: 'x' });
    const six = ['a', 'b', 'c', 'd', 'e', 'f'].map((l) => `${l}@example.com`);
    expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: six }, raw))).toEqual({
      code: 452,
      enhanced: '4.5.3',
      message: 'Too many recipients',
    });
    expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: [] }, raw))).toMatchObject({ code: 554, enhanced: '5.5.1' });
    const big = Buffer.concat([raw, Buffer.alloc(api.config.MAX_EMAIL_BYTES, 0x61)]);
    expect(refused(await smtp.submit(principal, { mailFrom: team.from(), rcptTo: ['a@example.com'] }, big))).toMatchObject({
      code: 552,
      enhanced: '5.3.4',
    });
  });
});
