import type { INestApplicationContext } from '@nestjs/common';
import type { Principal } from '@herald/accounts';
import { RedisService } from '@herald/redis';
import { eventually, PrivateRedis, startPrivateRedis } from '@herald/testing';
import type { TestTeam } from '../../../../test/support/api-harness';
import { authenticated, compose, startSubmissionSuite, type SubmissionSuite } from '../../../../test/support/smtp-submissions';
import type { SmtpSubmissionPort } from '../submission-port';

/**
 * The SMTP relay's send path while its Redis (a redis-server of this suite's own) is down: the
 * rate limit falls back to the process's share, mail without an idempotency key is accepted
 * (local quota), and a keyed message gets Postfix's temporary 451 4.3.0, so the client keeps it
 * and retries; after Redis returns the retry is accepted once.
 */
describe('SMTP submissions without Redis', () => {
  let server: PrivateRedis;
  let suite: SubmissionSuite;
  let app: INestApplicationContext;
  let smtp: SmtpSubmissionPort;
  let team: TestTeam;
  let principal: Principal;

  beforeAll(async () => {
    server = await startPrivateRedis();
    suite = await startSubmissionSuite({ REDIS_URL: server.url });
    ({ app, smtp } = suite);
    team = await suite.api.team();
    principal = await authenticated(smtp, team.token);
  });

  afterAll(async () => {
    await suite?.close();
    await server?.stop();
  });

  it('accepts unkeyed mail, answers a keyed message 451 4.3.0, and accepts its retry once Redis is back', async () => {
    const envelope = { mailFrom: team.from(), rcptTo: ['alice@example.com'] };
    const keyed = await compose({
      from: team.from(),
      to: 'alice@example.com',
      subject: 'keyed',
      text: 'x',
      headers: { 'Herald-Idempotency-Key': 'k-1' },
    });
    const unkeyed = await compose({ from: team.from(), to: 'alice@example.com', subject: 'plain', text: 'x' });

    await server.kill();
    await expect(app.get(RedisService).ping()).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(await smtp.checkMailFrom(principal, team.from())).toBeNull();
    expect(await smtp.submit(principal, envelope, unkeyed)).toMatchObject({ ok: true });
    expect(await smtp.submit(principal, envelope, keyed)).toEqual({
      ok: false,
      reply: { code: 451, enhanced: '4.3.0', message: 'Service temporarily unavailable, try again later' },
    });

    await server.restart();
    await eventually(async () => expect(await app.get(RedisService).ping()).toBe(true), 5000);
    const first = await smtp.submit(principal, envelope, keyed);
    expect(first).toMatchObject({ ok: true });
    expect(await smtp.submit(principal, envelope, keyed)).toEqual(first);
  });
});
