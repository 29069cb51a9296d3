import { randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { SuppressionsService } from '@herald/suppressions';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { NatsProbe } from '../support/nats-probe';
import { Json, OpenApiDocument } from '../support/openapi-document';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The /suppressions endpoints through the official `resend` package. */
describe('suppressions through the resend SDK', () => {
  let api: TestApi;
  let probe: NatsProbe;
  let acme: TestTeam;
  let globex: TestTeam;
  const address = (label = 'x') => `${label}-${randomUUID().slice(0, 8)}@example.com`;

  beforeAll(async () => {
    api = await startTestApi();
    probe = await NatsProbe.open(api.config);
    acme = await api.team();
    globex = await api.team({ region: 'eu-west-1' });
  });
  afterAll(async () => {
    await probe?.close();
    await api?.close();
  });

  it('adds an address (lowercased), idempotently, and gets it by id and by email', async () => {
    const email = address('Bob');
    const { data, error } = await acme.resend.suppressions.add({ email: email.toUpperCase() });
    expect(error).toBeNull();
    expect(data).toEqual({
      object: 'suppression',
      id: expect.stringMatching(UUID),
      email: email.toLowerCase(),
      origin: 'manual',
      source_id: null,
      created_at: expect.stringMatching(REST_TIME),
    });
    const again = await acme.resend.suppressions.add({ email: email.toLowerCase() });
    expect(again.data).toEqual(data);
    expect((await acme.resend.suppressions.get(data!.id)).data).toEqual(data);
    expect((await acme.resend.suppressions.get(email)).data).toEqual(data);
    // Raw, unencoded and doubly encoded path segments name it too.
    expect((await call(api.url, acme.token, 'GET', `/suppressions/${email}`)).body).toEqual(data);
    const twice = encodeURIComponent(encodeURIComponent(email));
    expect((await call(api.url, acme.token, 'GET', `/suppressions/${twice}`)).body).toEqual(data);
  });

  it('refuses a bad address with 422 naming the field', async () => {
    const bad = await acme.resend.suppressions.add({ email: 'not-an-address' });
    expect(bad.data).toBeNull();
    expect(bad.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('`email`') });
    const missing = await call(api.url, acme.token, 'POST', '/suppressions', {});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ name: 'missing_required_field', message: expect.stringContaining('`email`') });
    const batch = await acme.resend.suppressions.batch.add({ emails: [address(), 'nope'] });
    expect(batch.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('`emails[1]`') });
    const badGet = await acme.resend.suppressions.get('nope');
    expect(badGet.error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
  });

  it('refuses a batch of more than 100 and adds a batch of 100 (duplicates once)', async () => {
    const tooMany = await acme.resend.suppressions.batch.add({ emails: Array.from({ length: 101 }, () => address('many')) });
    expect(tooMany.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('at most 100') });
    const emails = Array.from({ length: 99 }, () => address('batch'));
    const { data, error } = await acme.resend.suppressions.batch.add({ emails: [...emails, emails[0].toUpperCase()] });
    expect(error).toBeNull();
    expect(data!.data).toHaveLength(99);
    expect(data!.data.map((e) => (e as unknown as { email: string }).email)).toEqual(emails);
    for (const entry of data!.data) expect(entry).toMatchObject({ object: 'suppression', id: expect.stringMatching(UUID) });
    const removeTooMany = await acme.resend.suppressions.batch.remove({ ids: Array.from({ length: 101 }, () => randomUUID()) });
    expect(removeTooMany.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const removed = await acme.resend.suppressions.batch.remove({ emails });
    expect(removed.data!.data).toHaveLength(99);
  });

  it('lists newest first, filtered by origin, with cursor pagination', async () => {
    const team = await api.team();
    const emails = [address('l1'), address('l2'), address('l3')];
    const ids: string[] = [];
    for (const email of emails) ids.push((await team.resend.suppressions.add({ email })).data!.id);
    const service = api.app.get(SuppressionsService);
    const bounced = await service.suppress(team.teamId, address('bounced'), 'bounce', randomUUID(), 'smtp; 550 5.1.1 no such user');

    const all = await team.resend.suppressions.list();
    expect(all.error).toBeNull();
    expect(all.data).toMatchObject({ object: 'list', has_more: false });
    expect(all.data!.data.map((e) => e.id)).toEqual([bounced.id, ...[...ids].reverse()]);
    expect(all.data!.data[0]).toEqual({
      id: bounced.id,
      email: bounced.email,
      origin: 'bounce',
      source_id: bounced.sourceId,
      created_at: expect.stringMatching(REST_TIME),
    });

    const manual = await team.resend.suppressions.list({ origin: 'manual', limit: 2 });
    expect(manual.data!.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(manual.data!.has_more).toBe(true);
    const next = await team.resend.suppressions.list({ origin: 'manual', limit: 2, after: ids[1] });
    expect(next.data).toMatchObject({ has_more: false, data: [{ id: ids[0] }] });
    const back = await team.resend.suppressions.list({ limit: 2, before: ids[0] });
    expect(back.data!.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect((await team.resend.suppressions.list({ origin: 'complaint' })).data!.data).toEqual([]);

    const badOrigin = await call(api.url, team.token, 'GET', '/suppressions?origin=nope');
    expect(badOrigin.status).toBe(422);
    expect(badOrigin.body.message).toContain('`origin`');
    const badLimit = await team.resend.suppressions.list({ limit: 101 });
    expect(badLimit.error).toMatchObject({ statusCode: 422 });
  });

  it('removes by id and by email (one and in batches); what is not listed is 404 or left out', async () => {
    const [a, b, c, d] = [address('ra'), address('rb'), address('rc'), address('rd')];
    const added = (await acme.resend.suppressions.batch.add({ emails: [a, b, c, d] })).data!.data;
    const byId = await acme.resend.suppressions.remove(added[0].id);
    expect(byId.data).toEqual({ object: 'suppression', id: added[0].id, deleted: true });
    const byEmail = await acme.resend.suppressions.remove(b.toUpperCase());
    expect(byEmail.data).toEqual({ object: 'suppression', id: added[1].id, deleted: true });
    const gone = await acme.resend.suppressions.remove(b);
    expect(gone.error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await acme.resend.suppressions.get(added[0].id)).error).toMatchObject({ statusCode: 404 });

    const batchIds = await acme.resend.suppressions.batch.remove({ ids: [added[2].id, randomUUID()] });
    expect(batchIds.data).toEqual({ data: [{ object: 'suppression', id: added[2].id, deleted: true }] });
    const batchEmails = await acme.resend.suppressions.batch.remove({ emails: [d, address('never')] });
    expect(batchEmails.data).toEqual({ data: [{ object: 'suppression', id: added[3].id, deleted: true }] });
    const both = await call(api.url, acme.token, 'POST', '/suppressions/batch/remove', { emails: [d], ids: [added[3].id] });
    expect(both.status).toBe(422);
  });

  it("keeps teams apart: another team's entry is 404 by id and by email, and not listed", async () => {
    const email = address('scoped');
    const entry = (await acme.resend.suppressions.add({ email })).data!;
    expect((await globex.resend.suppressions.get(entry.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await globex.resend.suppressions.get(email)).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.suppressions.remove(entry.id)).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.suppressions.batch.remove({ ids: [entry.id] })).data).toEqual({ data: [] });
    expect((await globex.resend.suppressions.list()).data!.data.map((e) => e.id)).not.toContain(entry.id);
    // The same address on globex's list is its own entry.
    const theirs = (await globex.resend.suppressions.add({ email })).data!;
    expect(theirs.id).not.toBe(entry.id);
    expect((await acme.resend.suppressions.get(email)).data!.id).toBe(entry.id);
  });

  it('refuses sending_access keys on every /suppressions endpoint', async () => {
    const sender = new Resend(await api.key(acme.teamId, 'sending_access'), { baseUrl: api.url });
    const refusals = await Promise.all([
      sender.suppressions.add({ email: address() }),
      sender.suppressions.list(),
      sender.suppressions.get(randomUUID()),
      sender.suppressions.remove(randomUUID()),
      sender.suppressions.batch.add({ emails: [address()] }),
      sender.suppressions.batch.remove({ ids: [randomUUID()] }),
    ]);
    for (const refused of refusals) expect(refused.error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
  });

  it("publishes suppression.added and suppression.removed on the team's home region events stream", async () => {
    const email = address('events');
    const entry = (await globex.resend.suppressions.add({ email })).data!;
    await globex.resend.suppressions.add({ email }); // idempotent: no second event
    await globex.resend.suppressions.remove(email);
    const ns = api.config.NATS_NAMESPACE;
    const events = (await probe.events('eu-west-1')).filter((e) => (e.data as { id: string }).id === entry.id);
    expect(events.map((e) => [e.type, e.subject])).toEqual([
      ['suppression.added', `${ns}.eu-west-1.events.suppression.added`],
      ['suppression.removed', `${ns}.eu-west-1.events.suppression.removed`],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({ id: expect.stringMatching(UUID), created_at: expect.stringMatching(ISO_TIME), team_id: globex.teamId });
      expect(event.data).toEqual({ id: entry.id, email, origin: 'manual', source_id: null, created_at: expect.stringMatching(ISO_TIME) });
    }
    const elsewhere = await probe.events('us-east-1');
    expect(elsewhere.filter((e) => (e.data as { id: string }).id === entry.id)).toEqual([]);
  });

  it('answers in the shapes /openapi.json documents', async () => {
    const document = new OpenApiDocument((await call(api.url, null, 'GET', '/openapi.json')).body);
    const ok = (method: string, path: string) =>
      document.resolve(document.operation(`${method} ${path}`).responses['200'].content['application/json'].schema);
    const items = (list: Json) => document.resolve(list.properties.data.items);
    const entry = (await acme.resend.suppressions.add({ email: address('doc') })).data!;
    expect(Object.keys(entry).sort()).toEqual([...ok('get', '/suppressions/{idOrEmail}').required].sort());
    expect(ok('get', '/suppressions/{idOrEmail}').properties.origin.enum).toEqual(['bounce', 'complaint', 'manual']);
    const page = (await acme.resend.suppressions.list({ limit: 1 })).data!;
    expect(Object.keys(page).sort()).toEqual([...ok('get', '/suppressions').required].sort());
    expect(Object.keys(page.data[0]).sort()).toEqual([...items(ok('get', '/suppressions')).required].sort());
    const removed = (await acme.resend.suppressions.remove(entry.id)).data!;
    expect(Object.keys(removed).sort()).toEqual([...ok('delete', '/suppressions/{idOrEmail}').required].sort());
    expect(items(ok('post', '/suppressions/batch/add')).required).toContain('id');
  });
});
