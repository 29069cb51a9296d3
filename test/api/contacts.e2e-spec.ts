import { randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;

/** Contacts, segments (and the legacy audiences), topics and contact properties through the official `resend` package. */
describe('contacts, segments, topics and contact properties through the resend SDK', () => {
  let api: TestApi;
  let acme: TestTeam;
  let globex: TestTeam;
  let resend: Resend;
  const address = (label = 'x') => `${label}-${randomUUID().slice(0, 8)}@example.com`;

  beforeAll(async () => {
    api = await startTestApi();
    acme = await api.team();
    globex = await api.team();
    resend = acme.resend;
  });
  afterAll(async () => {
    await api?.close();
  });

  it('creates, gets (by id and by address), lists, updates and deletes a contact with typed properties', async () => {
    const plan = await resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' });
    expect(plan.error).toBeNull();
    expect(plan.data).toEqual({ object: 'contact_property', id: expect.stringMatching(UUID) });
    const seats = await resend.contactProperties.create({ key: 'seats', type: 'number' });
    expect(seats.error).toBeNull();

    const email = address('Jane+news');
    const created = await resend.contacts.create({ email, firstName: 'Jane', lastName: 'Doe', properties: { plan: 'pro', seats: 5 } });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'contact', id: expect.stringMatching(UUID) });
    const id = created.data!.id;

    const expected = {
      object: 'contact',
      id,
      email: email.toLowerCase(),
      first_name: 'Jane',
      last_name: 'Doe',
      created_at: expect.stringMatching(REST_TIME),
      unsubscribed: false,
      properties: { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 5 } },
    };
    expect((await resend.contacts.get(id)).data).toEqual(expected);
    // By address, raw in the path (the SDK does not encode it), any case.
    expect((await resend.contacts.get({ email: email.toUpperCase() })).data).toEqual(expected);

    const updated = await resend.contacts.update({ email, firstName: null, unsubscribed: true, properties: { seats: 7, plan: null } });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ object: 'contact', id });
    expect((await resend.contacts.get({ id })).data).toMatchObject({
      first_name: null,
      last_name: 'Doe',
      unsubscribed: true,
      properties: { seats: { type: 'number', value: 7 } },
    });

    const list = await resend.contacts.list({ limit: 10 });
    expect(list.error).toBeNull();
    expect(list.data).toMatchObject({ object: 'list', has_more: false });
    expect(list.data!.data).toContainEqual({
      id,
      email: email.toLowerCase(),
      first_name: null,
      last_name: 'Doe',
      created_at: expect.stringMatching(REST_TIME),
      unsubscribed: true,
    });

    const removed = await resend.contacts.remove({ email });
    expect(removed.data).toEqual({ object: 'contact', contact: id, deleted: true });
    expect((await resend.contacts.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('pages the contact list with limit/after/before and has_more', async () => {
    const team = await api.team();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await team.resend.contacts.create({ email: address(`p${i}`) })).data!.id);
    const newestFirst = [...ids].reverse();
    const first = await team.resend.contacts.list({ limit: 2 });
    expect(first.data!.data.map((c) => c.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.data!.has_more).toBe(true);
    const second = await team.resend.contacts.list({ limit: 2, after: newestFirst[1] });
    expect(second.data!.data.map((c) => c.id)).toEqual(newestFirst.slice(2, 4));
    const back = await team.resend.contacts.list({ limit: 2, before: newestFirst[2] });
    expect(back.data!.data.map((c) => c.id)).toEqual(newestFirst.slice(0, 2));
    const last = await team.resend.contacts.list({ limit: 2, after: newestFirst[3] });
    expect(last.data).toMatchObject({ has_more: false, data: [{ id: newestFirst[4] }] });
  });

  it('creates, gets, lists, renames and deletes segments, and adds, lists and removes a contact’s segments', async () => {
    const segment = await resend.segments.create({ name: 'Customers' });
    expect(segment.error).toBeNull();
    expect(segment.data).toEqual({ object: 'segment', id: expect.stringMatching(UUID), name: 'Customers' });
    const segmentId = segment.data!.id;
    expect((await resend.segments.get(segmentId)).data).toEqual({
      object: 'segment',
      id: segmentId,
      name: 'Customers',
      created_at: expect.stringMatching(REST_TIME),
    });
    expect((await resend.segments.update(segmentId, { name: 'Paying customers' })).data).toEqual({ object: 'segment', id: segmentId });
    const list = await resend.segments.list();
    expect(list.data!.data).toContainEqual({ id: segmentId, name: 'Paying customers', created_at: expect.stringMatching(REST_TIME) });
    // audiences is the SDK's alias of segments.
    expect((await resend.audiences.get(segmentId)).data).toMatchObject({ id: segmentId, name: 'Paying customers' });

    const email = address('member');
    const other = (await resend.contacts.create({ email: address('other') })).data!.id;
    const { data } = await resend.contacts.create({ email, segments: [{ id: segmentId }] });
    const contactId = data!.id;
    expect((await resend.contacts.list({ segmentId })).data!.data.map((c) => c.id)).toEqual([contactId]);

    const second = (await resend.segments.create({ name: 'VIP' })).data!.id;
    expect((await resend.contacts.segments.add({ contactId, segmentId: second })).data).toEqual({ id: second });
    expect((await resend.contacts.segments.add({ email: address('nobody'), segmentId: second })).error).toMatchObject({ statusCode: 404 });
    const segments = await resend.contacts.segments.list({ email });
    expect(segments.data).toMatchObject({ object: 'list', has_more: false });
    expect(segments.data!.data.map((s) => s.id).sort()).toEqual([segmentId, second].sort());
    expect((await resend.contacts.segments.remove({ email, segmentId })).data).toEqual({ id: segmentId, deleted: true });
    expect((await resend.contacts.list({ segmentId })).data!.data).toEqual([]);
    expect((await resend.contacts.list({ audienceId: second })).data!.data.map((c) => c.id)).toEqual([contactId]);

    expect((await resend.segments.remove(second)).data).toEqual({ object: 'segment', id: second, deleted: true });
    expect((await resend.segments.get(second)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    // The contacts stay.
    expect((await resend.contacts.get(contactId)).data).toMatchObject({ id: contactId });
    expect((await resend.contacts.get(other)).data).toMatchObject({ id: other });
  });

  it('serves the legacy /audiences paths as segments, with the audience’s contacts', async () => {
    const audience = await call(api.url, acme.token, 'POST', '/audiences', { name: 'Old list' });
    expect(audience.status).toBe(200);
    expect(audience.body).toEqual({ object: 'audience', id: expect.stringMatching(UUID), name: 'Old list' });
    const audienceId: string = audience.body.id;
    expect((await call(api.url, acme.token, 'GET', '/audiences')).body.data).toContainEqual(
      expect.objectContaining({ id: audienceId, name: 'Old list' }),
    );
    expect((await call(api.url, acme.token, 'GET', `/audiences/${audienceId}`)).body).toMatchObject({ object: 'audience', id: audienceId });

    const email = address('legacy');
    const created = await resend.contacts.create({ audienceId, email, firstName: 'Leg' });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    const outsider = address('outsider');
    await resend.contacts.create({ email: outsider });
    expect((await resend.contacts.get({ audienceId, email })).data).toMatchObject({ id, first_name: 'Leg' });
    expect((await resend.contacts.get({ audienceId, email: outsider })).error).toMatchObject({ statusCode: 404 });
    expect((await call(api.url, acme.token, 'GET', `/audiences/${audienceId}/contacts`)).body.data.map((c: { id: string }) => c.id)).toEqual([id]);
    expect((await resend.contacts.update({ audienceId, id, lastName: 'Acy' })).data).toEqual({ object: 'contact', id });
    expect((await resend.segments.get(audienceId)).data).toMatchObject({ object: 'segment', id: audienceId });
    expect((await resend.contacts.remove({ audienceId, id })).data).toEqual({ object: 'contact', contact: id, deleted: true });
    expect((await call(api.url, acme.token, 'DELETE', `/audiences/${audienceId}`)).body).toEqual({
      object: 'audience',
      id: audienceId,
      deleted: true,
    });
  });

  it('creates, gets, lists, updates and deletes topics, and reads and sets a contact’s subscriptions', async () => {
    const news = await resend.topics.create({ name: 'Product news', description: 'Monthly', defaultSubscription: 'opt_in' });
    expect(news.error).toBeNull();
    expect(news.data).toMatchObject({ id: expect.stringMatching(UUID) });
    const offers = (await resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).data!;
    const got = await resend.topics.get(news.data!.id);
    expect(got.data).toEqual({
      object: 'topic',
      id: news.data!.id,
      name: 'Product news',
      description: 'Monthly',
      default_subscription: 'opt_in',
      visibility: 'private',
      created_at: expect.stringMatching(REST_TIME),
    });
    const public_ = await call(api.url, acme.token, 'POST', '/topics', { name: 'Events', default_subscription: 'opt_in', visibility: 'public' });
    expect(public_.status).toBe(200);
    expect((await resend.topics.list()).data!.data.map((t) => t.id)).toEqual(expect.arrayContaining([news.data!.id, offers.id, public_.body.id]));
    expect((await resend.topics.update({ id: offers.id, name: 'Special offers', description: 'Rarely' })).data).toMatchObject({ id: offers.id });
    expect((await resend.topics.get(offers.id)).data).toMatchObject({
      name: 'Special offers',
      description: 'Rarely',
      default_subscription: 'opt_out',
    });

    const email = address('topics');
    await resend.contacts.create({ email, topics: [{ id: offers.id, subscription: 'opt_in' }] });
    const listed = await resend.contacts.topics.list({ email });
    expect(listed.error).toBeNull();
    const subscriptions = Object.fromEntries(listed.data!.data.map((t) => [t.id, t.subscription]));
    expect(subscriptions).toMatchObject({ [news.data!.id]: 'opt_in', [offers.id]: 'opt_in', [public_.body.id]: 'opt_in' });
    expect(listed.data!.data.find((t) => t.id === offers.id)).toEqual({
      id: offers.id,
      name: 'Special offers',
      description: 'Rarely',
      subscription: 'opt_in',
    });

    const contact = (await resend.contacts.get({ email })).data!;
    const set = await resend.contacts.topics.update({ id: contact.id, topics: [{ id: news.data!.id, subscription: 'opt_out' }] });
    expect(set.error).toBeNull();
    expect(set.data).toEqual({ id: contact.id });
    const after = await resend.contacts.topics.list({ id: contact.id });
    expect(after.data!.data.find((t) => t.id === news.data!.id)?.subscription).toBe('opt_out');

    expect((await resend.topics.remove(public_.body.id)).data).toEqual({ object: 'topic', id: public_.body.id, deleted: true });
    expect((await resend.topics.get(public_.body.id)).error).toMatchObject({ statusCode: 404 });
  });

  it('creates, gets, lists, updates and deletes contact properties (deleting drops the contacts’ values)', async () => {
    const team = await api.team();
    const created = await team.resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'your company' });
    const id = created.data!.id;
    const got = await team.resend.contactProperties.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'contact_property',
      id,
      key: 'company',
      type: 'string',
      fallbackValue: 'your company',
      createdAt: expect.stringMatching(REST_TIME),
    });
    expect((await team.resend.contactProperties.update({ id, fallbackValue: 'your team' })).data).toEqual({ object: 'contact_property', id });
    const list = await team.resend.contactProperties.list();
    expect(list.data).toMatchObject({ object: 'list', has_more: false, data: [{ id, key: 'company', fallbackValue: 'your team' }] });

    const email = address('prop');
    await team.resend.contacts.create({ email, properties: { company: 'Acme' } });
    expect((await team.resend.contacts.get({ email })).data!.properties).toEqual({ company: { type: 'string', value: 'Acme' } });
    expect((await team.resend.contactProperties.remove(id)).data).toEqual({ object: 'contact_property', id, deleted: true });
    expect((await team.resend.contacts.get({ email })).data!.properties).toEqual({});
    expect((await team.resend.contactProperties.get(id)).error).toMatchObject({ statusCode: 404 });
  });

  it('answers 422 naming the invalid field', async () => {
    const segment = (await resend.segments.create({ name: 'Checks' })).data!.id;
    const topic = (await resend.topics.create({ name: 'Checks', defaultSubscription: 'opt_in' })).data!.id;
    const cases: [Promise<{ error: unknown }>, string, string][] = [
      [resend.contacts.create({ email: 'not-an-address' }), 'validation_error', '`email`'],
      [resend.contacts.create({ email: '' }), 'validation_error', '`email`'],
      [call(api.url, acme.token, 'POST', '/contacts', { first_name: 'No' }).then((r) => ({ error: r.body })), 'missing_required_field', '`email`'],
      [
        call(api.url, acme.token, 'POST', '/contacts', { email: address(), first_name: 7 }).then((r) => ({ error: r.body })),
        'validation_error',
        '`first_name`',
      ],
      [
        call(api.url, acme.token, 'POST', '/contacts', { email: address(), unsubscribed: 'yes' }).then((r) => ({ error: r.body })),
        'validation_error',
        '`unsubscribed`',
      ],
      [resend.contacts.create({ email: address(), properties: { nosuch: 'x' } }), 'validation_error', '`properties.nosuch`'],
      [resend.contacts.create({ email: address(), properties: { seats: 'many' } }), 'validation_error', '`properties.seats`'],
      [resend.contacts.create({ email: address(), segments: [{ id: 'nope' }] }), 'validation_error', '`segments[0].id`'],
      [resend.contacts.create({ email: address(), segments: [{ id: segment }, { id: randomUUID() }] }), 'validation_error', '`segments[1].id`'],
      [
        resend.contacts.create({ email: address(), topics: [{ id: topic, subscription: 'maybe' as 'opt_in' }] }),
        'validation_error',
        '`topics[0].subscription`',
      ],
      [resend.contacts.create({ email: address(), topics: [{ id: randomUUID(), subscription: 'opt_in' }] }), 'validation_error', '`topics[0].id`'],
      [
        call(api.url, acme.token, 'PATCH', `/contacts/${address()}`, { last_name: ['x'] }).then((r) => ({ error: r.body })),
        'validation_error',
        '`last_name`',
      ],
      [
        call(api.url, acme.token, 'PATCH', `/contacts/${address()}/topics`, [{ id: topic, subscription: 'no' }]).then((r) => ({ error: r.body })),
        'validation_error',
        '`topics[0].subscription`',
      ],
      [resend.segments.create({ name: '' }), 'validation_error', '`name`'],
      [call(api.url, acme.token, 'POST', '/segments', {}).then((r) => ({ error: r.body })), 'missing_required_field', '`name`'],
      [resend.topics.create({ name: 'x'.repeat(51), defaultSubscription: 'opt_in' }), 'validation_error', '`name`'],
      [resend.topics.create({ name: 'Bad', defaultSubscription: 'sometimes' as 'opt_in' }), 'validation_error', '`default_subscription`'],
      [
        call(api.url, acme.token, 'POST', '/topics', { name: 'Bad' }).then((r) => ({ error: r.body })),
        'missing_required_field',
        '`default_subscription`',
      ],
      [
        call(api.url, acme.token, 'POST', '/topics', { name: 'Bad', default_subscription: 'opt_in', visibility: 'secret' }).then((r) => ({
          error: r.body,
        })),
        'validation_error',
        '`visibility`',
      ],
      [
        call(api.url, acme.token, 'PATCH', `/topics/${topic}`, { default_subscription: 'opt_out' }).then((r) => ({ error: r.body })),
        'validation_error',
        '`default_subscription`',
      ],
      [resend.contactProperties.create({ key: 'bad key', type: 'string' }), 'validation_error', '`key`'],
      [resend.contactProperties.create({ key: 'email', type: 'string' }), 'validation_error', '`key`'],
      [resend.contactProperties.create({ key: 'ok_key', type: 'date' as 'string' }), 'validation_error', '`type`'],
      [
        resend.contactProperties.create({ key: 'ok_key2', type: 'number', fallbackValue: 'ten' as unknown as number }),
        'validation_error',
        '`fallback_value`',
      ],
      [resend.contacts.list({ limit: 0 }), 'validation_error', 'limit'],
    ];
    for (const [request, name, field] of cases) {
      const { error } = await request;
      expect({ field, error }).toEqual({ field, error: expect.objectContaining({ statusCode: 422, name, message: expect.stringContaining(field) }) });
    }
    // A path that is neither a UUID nor an address.
    expect((await resend.contacts.get('not-an-id')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await resend.segments.get('not-an-id')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    // One contact per address.
    const email = address('dup');
    await resend.contacts.create({ email });
    expect((await resend.contacts.create({ email: email.toUpperCase() })).error).toMatchObject({
      statusCode: 422,
      message: expect.stringContaining('`email`'),
    });
  });

  it('keeps teams apart and refuses sending-only keys', async () => {
    const email = address('private');
    const { data } = await resend.contacts.create({ email });
    expect((await globex.resend.contacts.get(data!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.contacts.get({ email })).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.contacts.list()).data!.data).toEqual([]);

    const sending = new Resend(await api.key(acme.teamId, 'sending_access'), { baseUrl: api.url });
    for (const request of [
      sending.contacts.list(),
      sending.contacts.create({ email: address() }),
      sending.segments.list(),
      sending.topics.list(),
      sending.contactProperties.list(),
      sending.contacts.imports.list(),
    ]) {
      expect((await request).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
    }
  });
});
