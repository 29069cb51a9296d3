import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '@herald/accounts';
import { newId } from '@herald/core';
import { SuppressionCache, SuppressionsService } from '@herald/suppressions';
import { eventually, startPrivateNats, type PrivateNats } from '@herald/testing';
import type { TestTeam } from '../../../../test/support/api-harness';
import { authenticated, startSubmissionSuite, type SubmissionSuite } from '../../../../test/support/smtp-submissions';
import type { SmtpSubmissionPort } from '../submission-port';

/**
 * The relay's RCPT TO suppression check (SuppressionCache) on a NATS server of this suite's own:
 * Postgres answers while the cache is cold, the team's list is then held and kept current by the
 * suppression.* events (an address added through the API is refused within a second), and with
 * the feed cut every check goes to Postgres again, never to "not suppressed".
 *
 * A suppression written straight into Postgres (no event) tells which of the two answered.
 */
describe('SMTP RCPT TO: the suppression cache', () => {
  let nats: PrivateNats;
  let suite: SubmissionSuite;
  let app: INestApplicationContext;
  let smtp: SmtpSubmissionPort;
  let cache: SuppressionCache;
  let team: TestTeam;
  let principal: Principal;
  const suppressed = { code: 550, enhanced: '5.1.1' };

  /** Only Postgres knows of it: no event is published. */
  const silently = (email: string) =>
    suite.api.app
      .get(DataSource)
      .query(`INSERT INTO suppressions (id, team_id, email, origin) VALUES ($1, $2, $3, 'manual')`, [newId(), team.teamId, email]);

  beforeAll(async () => {
    nats = await startPrivateNats();
    suite = await startSubmissionSuite({ NATS_URL: nats.url });
    ({ app, smtp } = suite);
    cache = app.get(SuppressionCache);
    team = await suite.api.team();
    principal = await authenticated(smtp, team.token);
  });

  afterAll(async () => {
    await suite?.close();
    await nats?.stop();
  });

  it('answers from Postgres while the feed is not live yet', async () => {
    expect(cache.isLive).toBe(false);
    await silently('cold@example.com');
    expect(await smtp.checkRecipient(principal, 'Cold@Example.com', 0)).toMatchObject(suppressed);
  });

  it('holds the list once live: a change through the API is honoured within one second, a change without an event is not seen', async () => {
    await eventually(async () => expect(cache.isLive).toBe(true));
    expect(await smtp.checkRecipient(principal, 'fresh@example.com', 0)).toBeNull();
    expect(await smtp.checkRecipient(principal, 'cold@example.com', 0)).toMatchObject(suppressed);

    await silently('silent@example.com');
    expect(await smtp.checkRecipient(principal, 'silent@example.com', 0)).toBeNull();

    const service = suite.api.app.get(SuppressionsService);
    await service.add(team.teamId, { email: 'Fresh@Example.com' });
    await eventually(async () => expect(await smtp.checkRecipient(principal, 'fresh@example.com', 0)).toMatchObject(suppressed), 1000);
    await service.remove(team.teamId, 'fresh@example.com');
    await eventually(async () => expect(await smtp.checkRecipient(principal, 'fresh@example.com', 0)).toBeNull(), 1000);
  });

  it('with the feed cut, asks Postgres for every check; once back, reads the lists again', async () => {
    await nats.kill();
    await eventually(async () => expect(cache.isLive).toBe(false), 5000);
    expect(await smtp.checkRecipient(principal, 'silent@example.com', 0)).toMatchObject(suppressed);
    await silently('while-cut@example.com');
    expect(await smtp.checkRecipient(principal, 'while-cut@example.com', 0)).toMatchObject(suppressed);

    await nats.restart();
    await eventually(async () => expect(cache.isLive).toBe(true), 15_000);
    expect(await smtp.checkRecipient(principal, 'while-cut@example.com', 0)).toMatchObject(suppressed);
    expect(await smtp.checkRecipient(principal, 'nobody@example.com', 0)).toBeNull();
  });
});
