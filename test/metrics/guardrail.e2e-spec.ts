import type { INestApplicationContext } from '@nestjs/common';
import type { MxSink } from '@herald/testing';
import { startMetrics } from '../../apps/metrics/src/metrics.app';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { smtpSubmissionsOf } from '../support/smtp-submissions';
import { waitUntil } from '../support/worker-process';

/**
 * The reputation guardrail end to end: a burst of sends to an MX that refuses every message
 * (550) bounces them all; the metrics role counts the bounces and pauses the domain; the next
 * send over REST and over SMTP is refused with the reason and the rate; an owner's resume lets
 * the domain send again. Every change is a domain.updated event.
 */
describe('reputation guardrail', () => {
  let world: DeliveryWorld;
  let metrics: INestApplicationContext;
  let team: TestTeam;
  let sink: MxSink;

  beforeAll(async () => {
    world = await DeliveryWorld.start({ METRICS_GUARDRAIL_MIN_SENT: '10' });
    metrics = await startMetrics(world.api.config);
    team = await world.team();
    sink = await world.sink();
    sink.behave({ reject: '550 5.1.1 no such user here' });
    world.route('gone.test', { host: 'mx.gone.test', address: sink.host });
  });

  afterAll(async () => {
    await metrics?.close();
    await world?.close();
  });

  const send = (to: string) => call(world.api.url, team.token, 'POST', '/emails', { from: team.from(), to, subject: 'Hi', text: 'Hi' });
  const domain = async () => (await call(world.api.url, team.token, 'GET', `/domains/${team.domainId}`)).body;
  const domainEvents = async () =>
    (
      await world.db.query<{ data: { paused: unknown } }>(
        `SELECT data FROM resource_events WHERE type = 'domain.updated' AND data->>'id' = $1 ORDER BY created_at`,
        [team.domainId],
      )
    ).rows;

  it('pauses a domain after a burst of bounces, refuses its sends with the reason, and resumes', async () => {
    const batch = Array.from({ length: 12 }, (_, i) => ({ from: team.from(), to: `user${i}@gone.test`, subject: 'Hi', text: 'Hi' }));
    expect((await call(world.api.url, team.token, 'POST', '/emails/batch', batch)).status).toBe(200);

    await waitUntil('the domain to be paused', async () => (await domain()).paused !== null || JSON.stringify((await domain()).paused), 30_000, 100);
    const { paused } = await domain();
    // Judged as the bounces are counted: paused as soon as the rate passed 4% with 12 sent.
    expect(paused).toMatchObject({ reason: 'bounce_rate', threshold: 0.04, sent: 12, window_hours: 24 });
    expect(paused.rate).toBeGreaterThan(0.04);
    expect(paused.message).toContain(`bounce rate over the last 24 hours is ${Math.round(paused.rate * 1000) / 10}% (limit 4%, 12 recipients)`);

    const refused = await send('someone@inbox.test');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ statusCode: 403, name: 'domain_paused', message: paused.message });

    const smtp = smtpSubmissionsOf(world.api.app);
    const auth = await smtp.authenticate('herald', team.token);
    if (!auth.ok) throw new Error('SMTP authentication failed');
    const reply = await smtp.checkMailFrom(auth.principal, team.from());
    expect(reply).toMatchObject({ code: 550, enhanced: '5.7.1', message: paused.message });

    const paused1 = await domainEvents();
    expect(paused1.at(-1)?.data.paused).toMatchObject({ reason: 'bounce_rate', rate: paused.rate });

    const resumed = await call(world.api.url, team.token, 'POST', `/domains/${team.domainId}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ object: 'domain', id: team.domainId, paused: null });
    expect((await domainEvents()).at(-1)?.data.paused).toBeNull();
    expect((await send('someone@inbox.test')).status).toBe(200);
  });

  it('answers 404 for another team’s domain and 422 for a malformed id', async () => {
    const other = await world.team();
    expect((await call(world.api.url, other.token, 'POST', `/domains/${team.domainId}/resume`)).status).toBe(404);
    expect((await call(world.api.url, team.token, 'POST', '/domains/nope/resume')).body).toEqual({
      statusCode: 422,
      name: 'invalid_parameter',
      message: 'The `id` must be a valid UUID.',
    });
  });
});
