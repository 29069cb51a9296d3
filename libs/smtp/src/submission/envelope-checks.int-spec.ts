import { randomUUID } from 'node:crypto';
import { ApiKeysService, type Principal } from '@herald/accounts';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { SuppressionsService } from '@herald/suppressions';
import { eventually } from '@herald/testing';
import { call, markVerified, type TestApi, type TestTeam } from '../../../../test/support/api-harness';
import {
  authenticated as authenticate,
  compose,
  refused,
  startSubmissionSuite,
  type SubmissionSuite,
} from '../../../../test/support/smtp-submissions';
import type { SmtpSubmissionPort } from '../submission-port';

/** The checks of the SMTP steps before DATA: AUTH, MAIL FROM and RCPT TO. */
describe('SmtpSubmissions: AUTH, MAIL FROM and RCPT TO', () => {
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
      const other = await api.app
        .get(DomainsService)
        .create({ teamId: team.teamId, homeRegion: 'us-east-1' }, { name: `second-${randomUUID().slice(0, 6)}.test` });
      await markVerified(api.app.get(DomainsRepository), other.id);
      const { token } = await api.app
        .get(ApiKeysService)
        .create(team.teamId, { name: 'restricted', permission: 'sending_access', domain_id: team.domainId });
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
      expect(refused(await smtp.submit(restricted, { mailFrom: team.from(), rcptTo: ['a@example.com'] }, raw))).toMatchObject({
        code: 550,
        enhanced: '5.7.1',
      });
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
      // The relay's list is a cache kept by suppression.* events (SuppressionCache): honoured within a second.
      await eventually(
        async () =>
          expect(await smtp.checkRecipient(principal, 'Gone@Example.com', 0)).toEqual({
            code: 550,
            enhanced: '5.1.1',
            message: '<Gone@Example.com> is on the suppression list (previous bounce or complaint)',
          }),
        1000,
      );
    });
  });
});
