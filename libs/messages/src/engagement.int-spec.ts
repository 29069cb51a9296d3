import { DataSource } from 'typeorm';
import { newId } from '@herald/core';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { newEmailRow, normalizedEmail } from '../../../test/support/email-rows';
import type { EngagementHit } from './engagement.repository';
import { EmailStore } from './email.store';

/**
 * Opens and clicks recorded through the email record's owner: first-of-class uniques settled by
 * the database under concurrency, retries stored once, unknown emails recording nothing, and
 * last_event following.
 */
describe('EmailStore.recordEngagement', () => {
  let api: TestApi;
  let team: TestTeam;
  let store: EmailStore;
  let db: DataSource;

  beforeAll(async () => {
    api = await startTestApi();
    team = await api.team();
    store = api.app.get(EmailStore);
    db = api.app.get(DataSource);
  });

  afterAll(() => api?.close());

  async function email(): Promise<string> {
    const row = newEmailRow(
      team.teamId,
      normalizedEmail(team.from('hello'), team.domain, {
        to: ['a@inbox.test', 'b@inbox.test'],
        recipients: [
          { kind: 'to', address: 'a@inbox.test' },
          { kind: 'to', address: 'b@inbox.test' },
        ],
      }),
    );
    await store.insert([row]);
    return row.id;
  }

  const hit = (emailId: string, over: Partial<EngagementHit> = {}): EngagementHit => ({
    id: newId(),
    kind: 'click',
    emailId,
    position: 0,
    link: { index: 0, url: 'https://shop.example/' },
    ipAddress: '203.0.113.9',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0.0.0 Safari/537.36',
    at: new Date(),
    machine: false,
    reason: null,
    ...over,
  });

  it('counts one unique per recipient, kind, link and class, however many hits race for it', async () => {
    const id = await email();
    const racing = Array.from({ length: 12 }, () => hit(id));
    const recorded = (await Promise.all(racing.map((h) => store.recordEngagement([h])))).flat();
    expect(recorded).toHaveLength(12);
    expect(recorded.filter((e) => (e.data.tracking as { unique: boolean }).unique)).toHaveLength(1);

    const others = await store.recordEngagement([
      hit(id, { link: { index: 1, url: 'https://shop.example/other' } }),
      hit(id, { position: 1 }),
      hit(id, { machine: true, reason: 'link_scanner' }),
      hit(id, { kind: 'open', link: null }),
      hit(id, { kind: 'open', link: null }),
    ]);
    expect(others.map((e) => [e.type, e.recipients, (e.data.tracking as { unique: boolean }).unique])).toEqual([
      ['email.clicked', ['a@inbox.test'], true],
      ['email.clicked', ['b@inbox.test'], true],
      ['email.clicked', ['a@inbox.test'], true],
      ['email.opened', ['a@inbox.test'], true],
      ['email.opened', ['a@inbox.test'], false],
    ]);
    expect(others[3]!.data).toMatchObject({ open: { ipAddress: '203.0.113.9', timestamp: expect.stringMatching(/Z$/) } });
    expect(others[0]!.data).toMatchObject({ click: { link: 'https://shop.example/other' }, tracking: { machine: false, reason: null } });
  });

  it('stores a retried hit once, keeps it unique, and lets last_event follow', async () => {
    const id = await email();
    const first = hit(id, { kind: 'open', link: null });
    expect(await store.recordEngagement([first])).toHaveLength(1);
    expect(await store.recordEngagement([first])).toEqual([]);
    const rows: { type: string; unique: boolean }[] = await db.query(
      `SELECT type, (data->'tracking'->>'unique')::boolean AS unique FROM email_events WHERE email_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ type: 'email.opened', unique: true }]);
    expect((await db.query(`SELECT last_event FROM emails WHERE id = $1`, [id]))[0].last_event).toBe('opened');
    await store.recordEngagement([hit(id)]);
    expect((await db.query(`SELECT last_event FROM emails WHERE id = $1`, [id]))[0].last_event).toBe('clicked');
  });

  it('records hits whose caller publishes the events: stored as published, a retried hit answered as it was stored', async () => {
    const id = await email();
    const first = hit(id);
    const [event] = await store.recordEngagementPublished([first]);
    expect(event!.data.tracking).toEqual({ machine: false, reason: null, unique: true });
    // Again with a new hit, as a redelivered message would come: the new one is not unique, the
    // retried one is answered as stored (still the unique one), and nothing is stored twice.
    const again = await store.recordEngagementPublished([first, hit(id)]);
    expect(again).toHaveLength(2);
    expect(again.find((e) => e.id === event!.id)).toEqual(event);
    expect(again.find((e) => e.id !== event!.id)!.data.tracking).toEqual({ machine: false, reason: null, unique: false });
    const rows: { n: number; unpublished: number }[] = await db.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE published_at IS NULL)::int AS unpublished FROM email_events WHERE email_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ n: 2, unpublished: 0 }]);
  });

  it('records nothing for an email or a recipient that is not on record', async () => {
    const id = await email();
    expect(await store.recordEngagement([hit(newId()), hit(id, { position: 7 })])).toEqual([]);
  });
});
