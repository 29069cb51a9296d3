import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually } from '@herald/testing';
import { NatsProbe } from '../../../test/support/nats-probe';
import { OutboxWorld, startOutboxWorld } from '../../../test/support/outbox-world';
import { ContactMembershipsService } from './contact-memberships.service';
import { ContactPropertiesService } from './contact-properties.service';
import { contactEventData } from './contact-events';
import { ContactsDirectory } from './contacts-directory';
import { ContactsModule } from './contacts.module';
import { ContactsService } from './contacts.service';
import { SegmentsService } from './segments.service';
import { TopicsService } from './topics.service';

interface OutboxRow {
  id: string;
  type: string;
  region: string;
  data: Record<string, unknown>;
  published_at: Date | null;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** contact.* events go through the resource event outbox; the broadcasts side's calls (ContactsDirectory) work on the real database. */
describe('contact events and the contacts directory (Postgres, NATS)', () => {
  let world: OutboxWorld;
  let db: DataSource;
  let probe: NatsProbe;
  let contacts: ContactsService;
  let memberships: ContactMembershipsService;
  let segments: SegmentsService;
  let topics: TopicsService;
  let properties: ContactPropertiesService;
  let directory: ContactsDirectory;
  let teamId: string;

  const address = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;
  const rowsFor = (contactId: string): Promise<OutboxRow[]> =>
    db.query(`SELECT id, type, region, data, published_at FROM resource_events WHERE data->>'id' = $1 ORDER BY created_at, id`, [contactId]);

  beforeAll(async () => {
    world = await startOutboxWorld([ContactsModule]);
    ({ db, probe } = world);
    const get = <T>(c: new (...args: never[]) => T) => world.moduleRef.get(c);
    contacts = get(ContactsService);
    memberships = get(ContactMembershipsService);
    segments = get(SegmentsService);
    topics = get(TopicsService);
    properties = get(ContactPropertiesService);
    directory = get(ContactsDirectory);
    teamId = randomUUID();
    await db.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', 'eu-west-1', 'free')`, [teamId]);
  });

  afterEach(() => jest.restoreAllMocks());
  afterAll(() => world?.close());

  it('records contact.created, contact.updated and contact.deleted with Resend’s data, publishes them and marks them published', async () => {
    const segment = await segments.create(teamId, { name: 'Newsletter' });
    const email = address('ann');
    const { id } = await contacts.create(teamId, { email, first_name: 'Ann', segments: [{ id: segment.id }] });
    await contacts.update(teamId, email, { last_name: 'Lee', unsubscribed: true });
    await memberships.removeFromSegment(teamId, id, segment.id);
    await contacts.remove(teamId, id);

    const rows = await rowsFor(id);
    expect(rows.map((r) => [r.type, r.region])).toEqual([
      ['contact.created', 'eu-west-1'],
      ['contact.updated', 'eu-west-1'],
      ['contact.updated', 'eu-west-1'],
      ['contact.deleted', 'eu-west-1'],
    ]);
    expect(rows[0].data).toEqual({
      id,
      audience_id: segment.id,
      segment_ids: [segment.id],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      email,
      first_name: 'Ann',
      last_name: null,
      unsubscribed: false,
    });
    expect(rows[1].data).toMatchObject({ last_name: 'Lee', unsubscribed: true, segment_ids: [segment.id] });
    expect(rows[2].data).toMatchObject({ segment_ids: [], audience_id: null });
    expect(rows[3].data).toMatchObject({ id, email, unsubscribed: true });
    const onStream = new Map((await probe.events('eu-west-1')).map((e) => [e.id, e]));
    for (const row of rows) expect(onStream.get(row.id)).toMatchObject({ type: row.type, team_id: teamId, data: row.data });
    await eventually(async () => expect((await rowsFor(id)).every((r) => r.published_at instanceof Date)).toBe(true));
  });

  it('creates no contact when its event cannot be recorded', async () => {
    const email = address('refused');
    jest.spyOn(world.outbox, 'record').mockRejectedValueOnce(new Error('outbox unavailable'));
    await expect(contacts.create(teamId, { email })).rejects.toThrow('outbox unavailable');
    expect(await directory.findByEmail(teamId, email)).toBeNull();
  });

  it('pages a segment by contact id with properties, fallbacks and topic subscriptions resolved', async () => {
    await properties.create(teamId, { key: `plan_${randomUUID().slice(0, 4)}`, type: 'string', fallback_value: 'free' });
    const [plan] = (await properties.list(teamId, {})).data.filter((p) => p.fallback_value === 'free');
    await properties.create(teamId, { key: `seats_${randomUUID().slice(0, 4)}`, type: 'number' });
    const seats = (await properties.list(teamId, {})).data.find((p) => p.type === 'number')!;
    const segment = await segments.create(teamId, { name: 'Members' });
    const optIn = await topics.create(teamId, { name: 'News', default_subscription: 'opt_in' });
    const optOut = await topics.create(teamId, { name: 'Offers', default_subscription: 'opt_out' });
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { id } = await contacts.create(teamId, {
        email: address(`m${i}`),
        first_name: `M${i}`,
        properties: i === 0 ? { [plan.key]: 'pro', [seats.key]: 3 } : {},
        segments: [{ id: segment.id }],
        topics:
          i === 1
            ? [
                { id: optIn.id, subscription: 'opt_out' },
                { id: optOut.id, subscription: 'opt_in' },
              ]
            : [],
      });
      created.push(id);
    }
    await contacts.create(teamId, { email: address('outsider') });

    const first = await directory.segmentMembersPage(teamId, segment.id, { limit: 3, topicId: optIn.id });
    const second = await directory.segmentMembersPage(teamId, segment.id, { limit: 3, afterContactId: first.nextAfter, topicId: optIn.id });
    expect(second.nextAfter).toBeNull();
    const members = [...first.members, ...second.members];
    expect(members.map((m) => m.contactId)).toEqual([...created].sort());
    const byId = new Map(members.map((m) => [m.contactId, m]));
    expect(byId.get(created[0])).toMatchObject({
      firstName: 'M0',
      unsubscribed: false,
      properties: { [plan.key]: 'pro', [seats.key]: 3 },
      topicSubscription: 'opt_in',
    });
    expect(byId.get(created[1])).toMatchObject({ properties: { [plan.key]: 'free', [seats.key]: null }, topicSubscription: 'opt_out' });
    const offers = await directory.segmentMembersPage(teamId, segment.id, { limit: 10, topicId: optOut.id });
    expect(offers.members.filter((m) => m.topicSubscription === 'opt_in').map((m) => m.contactId)).toEqual([created[1]]);
    expect(await directory.countSegmentMembers(teamId, segment.id)).toBe(5);
    expect(await directory.member(teamId, created[1], optOut.id)).toEqual(
      byId.get(created[1]) && { ...byId.get(created[1]), topicSubscription: 'opt_in' },
    );
    expect(await directory.member(teamId, randomUUID())).toBeNull();
    expect(await directory.propertyFallbacks(teamId)).toMatchObject({ [plan.key]: 'free', [seats.key]: null });
    const raw = await directory.segmentMembersPage(teamId, segment.id, { limit: 10, rawProperties: true });
    expect(raw.members.find((m) => m.contactId === created[1])?.properties).toMatchObject({ [plan.key]: null, [seats.key]: null });
    expect(raw.members.find((m) => m.contactId === created[0])?.properties).toMatchObject({ [plan.key]: 'pro', [seats.key]: 3 });
    expect((await directory.member(teamId, created[1], null, true))?.properties).toMatchObject({ [plan.key]: null });
  });

  it('unsubscribes a contact and sets one topic, each with contact.updated in the same transaction, and announces no-ops not at all', async () => {
    const email = address('Bob');
    const topic = await topics.create(teamId, { name: 'Digest', default_subscription: 'opt_in' });
    const { id } = await contacts.create(teamId, { email });
    const found = await directory.findByEmail(teamId, email.toUpperCase());
    expect(found).toMatchObject({ id, email: email.toLowerCase(), unsubscribed: false });

    expect(await directory.setTopicSubscription(teamId, id, topic.id, 'opt_out')).toMatchObject({ id });
    expect(await directory.setTopicSubscription(teamId, id, topic.id, 'opt_out')).toMatchObject({ id });
    expect(await directory.setUnsubscribed(teamId, id)).toMatchObject({ id, unsubscribed: true });
    expect(await directory.setUnsubscribed(teamId, id)).toMatchObject({ id, unsubscribed: true });
    expect(await directory.setUnsubscribed(teamId, randomUUID())).toBeNull();
    expect((await directory.topicsOf(teamId, id)).find((t) => t.topic.id === topic.id)?.subscription).toBe('opt_out');

    const types = (await rowsFor(id)).map((r) => r.type);
    expect(types).toEqual(['contact.created', 'contact.updated', 'contact.updated']);
    const topicEvents: { type: string; data: unknown }[] = await db.query(
      `SELECT type, data FROM resource_events WHERE type = 'contact.topics.updated' AND data->>'email' = $1`,
      [email.toLowerCase()],
    );
    expect(topicEvents).toEqual([
      { type: 'contact.topics.updated', data: { email: email.toLowerCase(), topics: [{ id: topic.id, subscription: 'opt_out' }] } },
    ]);

    // Within the caller's transaction: rolled back with it, event included.
    await expect(
      directory.transaction(async (tx) => {
        await directory.setUnsubscribedWithin(tx, teamId, id, false);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await directory.findById(teamId, id))?.unsubscribed).toBe(true);
    const { publish } = await directory.transaction((tx) => directory.setUnsubscribedWithin(tx, teamId, id, false));
    await publish();
    expect((await directory.findById(teamId, id))?.unsubscribed).toBe(false);
    expect((await rowsFor(id)).map((r) => r.type)).toEqual(['contact.created', 'contact.updated', 'contact.updated', 'contact.updated']);
  });

  it('unsubscribes at once: the contact and its contact.updated in one statement, the data as contactEventData builds it, published and marked', async () => {
    const [first, second] = [await segments.create(teamId, { name: 'First' }), await segments.create(teamId, { name: 'Second' })];
    const email = address('one-click');
    const { id } = await contacts.create(teamId, {
      email,
      first_name: 'Ó’Brien "Jo"',
      last_name: null,
      segments: [{ id: first.id }, { id: second.id }],
    });
    // Microseconds in both timestamps, as now() writes them: the SQL must truncate them as Date does.
    await db.query(`UPDATE contacts SET created_at = '2026-03-01 10:00:00.570999+00' WHERE id = $1`, [id]);

    const changed = await directory.unsubscribeAtOnce(teamId, id, 'eu-west-1');
    // Both memberships were made by the create's one statement (one created_at), so they come in
    // segment id order; the two ids may share a millisecond, where creation order says nothing.
    expect(changed).toMatchObject({ id, unsubscribed: true, segmentIds: [first.id, second.id].sort() });
    const rows = await rowsFor(id);
    expect(rows.map((r) => [r.type, r.region])).toEqual([
      ['contact.created', 'eu-west-1'],
      ['contact.updated', 'eu-west-1'],
    ]);
    // The SQL's data is what the JS path would have written for the same row.
    expect(rows[1].data).toEqual(contactEventData(changed!));
    expect(rows[1].data).toMatchObject({
      created_at: '2026-03-01T10:00:00.570Z',
      first_name: 'Ó’Brien "Jo"',
      last_name: null,
      // The first of its segments in the order above (ids made in one millisecond sort by their random bits).
      audience_id: [first.id, second.id].sort()[0],
    });
    await eventually(async () =>
      expect((await probe.events('eu-west-1')).find((e) => e.id === rows[1].id)).toMatchObject({
        type: 'contact.updated',
        team_id: teamId,
        data: contactEventData(changed!),
      }),
    );
    await eventually(async () => expect((await rowsFor(id)).every((r) => r.published_at instanceof Date)).toBe(true));

    // Nothing to change, or no such contact: nothing written, and the caller takes the general path.
    expect(await directory.unsubscribeAtOnce(teamId, id, 'eu-west-1')).toBeNull();
    expect(await directory.unsubscribeAtOnce(teamId, randomUUID(), 'eu-west-1')).toBeNull();
    expect(await rowsFor(id)).toHaveLength(2);
  });
});
