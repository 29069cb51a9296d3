import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JetStreamPublisher, trackingHitsSubject } from '@herald/bus';
import { pick } from '@herald/config';
import { newId } from '@herald/core';
import { EmailStore } from '@herald/messages';
import { MetricsService } from '@herald/observability';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { newEmailRow, normalizedEmail } from '../../../test/support/email-rows';
import { NatsProbe } from '../../../test/support/nats-probe';
import { waitUntil } from '../../../test/support/worker-process';
import { encodeHits } from './tracking-hits';
import { TrackingRecorder } from './tracking-recorder';
import { TrackingService } from './tracking.service';
import { TRACKING_CONFIG } from './tracking.config';
import { TrackingKeys } from './tracking-token';

const READER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

/**
 * The hit path off the redirect: an answered hit is on the region's tracking stream, the api
 * role's consumer records it (event, unique, last_event), a message delivered twice records once,
 * and with no stream to take the hit it is in Postgres before the answer.
 */
describe('TrackingService and the tracking stream', () => {
  const key = randomBytes(32);
  const keys = TrackingKeys.of([key]);
  let api: TestApi;
  let team: TestTeam;
  let db: DataSource;

  beforeAll(async () => {
    api = await startTestApi({ TRACKING_KEYS: key.toString('base64') });
    team = await api.team();
    db = api.app.get(DataSource);
  });

  afterAll(() => api?.close());

  async function email(): Promise<string> {
    const row = newEmailRow(team.teamId, normalizedEmail(team.from('hello'), team.domain));
    await api.app.get(EmailStore).insert([row]);
    return row.id;
  }

  const clickToken = (emailId: string) =>
    keys.sign({ kind: 'click', emailId, position: 0, signedAt: new Date(Date.now() - 3_600_000), link: 0, url: 'https://shop.example/a' });

  const clicks = async (emailId: string): Promise<{ link: string; unique: boolean; lastEvent: string }[]> =>
    (
      await db.query(
        `SELECT data, (SELECT last_event FROM emails WHERE id = $1) AS last_event FROM email_events WHERE email_id = $1 AND type = 'email.clicked'`,
        [emailId],
      )
    ).map((r: { data: { click: { link: string }; tracking: { unique: boolean } }; last_event: string }) => ({
      link: r.data.click.link,
      unique: r.data.tracking.unique,
      lastEvent: r.last_event,
    }));

  it('answers a verified hit and records it through the stream: the event, its unique flag and last_event', async () => {
    const id = await email();
    const tracking = api.app.get(TrackingService);
    await expect(tracking.hit('click', clickToken(id), { ipAddress: '203.0.113.9', userAgent: READER })).resolves.toEqual({
      location: 'https://shop.example/a',
    });
    await tracking.hit('click', clickToken(id), { ipAddress: '203.0.113.9', userAgent: READER });
    await waitUntil('two clicks recorded', async () => (await clicks(id)).length === 2, 10_000, 50);
    const recorded = await clicks(id);
    expect(recorded.map((c) => c.unique).sort()).toEqual([false, true]);
    expect(recorded.every((c) => c.link === 'https://shop.example/a' && c.lastEvent === 'clicked')).toBe(true);
    // On the events stream before the hits' message was acked, so the rows are stored as published.
    const rows: { id: string; published: boolean }[] = await db.query(
      `SELECT id, published_at IS NOT NULL AS published FROM email_events WHERE email_id = $1 ORDER BY id`,
      [id],
    );
    expect(rows.map((r) => r.published)).toEqual([true, true]);
    const probe = await NatsProbe.open(api.config);
    const streamed = (await probe.events(api.config.HERALD_REGION)).filter((e) => (e.data as { email_id: string }).email_id === id);
    await probe.close();
    expect(streamed.map((e) => e.id).sort()).toEqual(rows.map((r) => r.id));
    expect(streamed.every((e) => e.type === 'email.clicked' && e.subject.endsWith('.email.clicked'))).toBe(true);
  });

  it('records a message delivered twice once', async () => {
    const id = await email();
    const hit = {
      id: newId(),
      kind: 'click' as const,
      emailId: id,
      position: 0,
      link: { index: 0, url: 'https://shop.example/b' },
      ipAddress: '203.0.113.9',
      userAgent: READER,
      at: new Date(),
      machine: false,
      reason: null,
    };
    const subject = trackingHitsSubject(api.config.NATS_NAMESPACE, api.config.HERALD_REGION);
    const publisher = api.app.get(JetStreamPublisher);
    // Two messages (as a publish retried after its ack was lost beyond the duplicate window would be).
    await publisher.publish(subject, encodeHits([hit]), newId());
    await publisher.publish(subject, encodeHits([hit]), newId());
    const other = await email();
    await publisher.publish(subject, encodeHits([{ ...hit, id: newId(), emailId: other }]), newId());
    await waitUntil('the later message recorded', async () => (await clicks(other)).length === 1, 10_000, 50);
    expect(await clicks(id)).toEqual([{ link: 'https://shop.example/b', unique: true, lastEvent: 'clicked' }]);
  });

  it('records the hit in Postgres before answering when no stream takes it', async () => {
    const id = await email();
    const config = { ...pick(api.config, TRACKING_CONFIG.keys), NATS_NAMESPACE: `nostream${Date.now()}` };
    const orphan = new TrackingService(config, api.app.get(JetStreamPublisher), api.app.get(TrackingRecorder), api.app.get(MetricsService));
    await expect(orphan.hit('click', clickToken(id), { ipAddress: '203.0.113.9', userAgent: READER })).resolves.toEqual({
      location: 'https://shop.example/a',
    });
    expect(await clicks(id)).toEqual([{ link: 'https://shop.example/a', unique: true, lastEvent: 'clicked' }]);
    await orphan.onModuleDestroy();
  });
});
