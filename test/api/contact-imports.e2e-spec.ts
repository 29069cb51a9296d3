import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;
const csv = (lines: string[]) => new Blob([lines.join('\r\n')], { type: 'text/csv' });

/** POST /contacts/imports (multipart CSV) through the SDK's contacts.imports, on the real database. */
describe('contact imports through the resend SDK', () => {
  let api: TestApi;
  let acme: TestTeam;
  let db: DataSource;

  beforeAll(async () => {
    api = await startTestApi();
    acme = await api.team();
    db = api.app.get(DataSource);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('imports the good rows, reports the rejected ones with their line and reason, and joins the segments and topics asked for', async () => {
    const { resend } = acme;
    await resend.contactProperties.create({ key: 'plan', type: 'string' });
    await resend.contactProperties.create({ key: 'seats', type: 'number' });
    const segment = (await resend.segments.create({ name: 'Imported' })).data!.id;
    const topic = (await resend.topics.create({ name: 'Digest', defaultSubscription: 'opt_in' })).data!.id;
    const existing = (await resend.contacts.create({ email: 'old@example.com', firstName: 'Old', lastName: 'Timer' })).data!.id;

    const file = csv([
      'Email,First Name,last_name,Unsubscribed,plan,seats',
      'ann@example.com,Ann,Lee,false,pro,3',
      '"bob@example.com","Bob, Jr.",,yes,,',
      'not-an-address,Nope,,,,',
      ',Empty,,,,',
      'carl@example.com,Carl,,maybe,,',
      'dora@example.com,Dora,,,free,lots',
      'ANN@example.com,Ann again,,,,',
      'old@example.com,Older,,,team,10',
    ]);
    const created = await resend.contacts.imports.create({ file, segments: [{ id: segment }], topics: [{ id: topic, subscription: 'opt_out' }] });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'contact_import', id: expect.stringMatching(UUID) });

    const report = await resend.contacts.imports.get(created.data!.id);
    expect(report.error).toBeNull();
    expect(report.data).toEqual({
      object: 'contact_import',
      id: created.data!.id,
      status: 'completed',
      created_at: expect.stringMatching(REST_TIME),
      completed_at: expect.stringMatching(REST_TIME),
      counts: { total: 8, created: 2, updated: 1, skipped: 1, failed: 4 },
      rejected_rows: [
        { line: 4, email: null, reason: expect.stringContaining('not an email address') },
        { line: 5, email: null, reason: expect.stringContaining('empty') },
        { line: 6, email: 'carl@example.com', reason: expect.stringContaining('`unsubscribed`') },
        { line: 7, email: 'dora@example.com', reason: expect.stringContaining('`seats`') },
        { line: 8, email: 'ann@example.com', reason: 'The address appears on line 2 already.' },
      ],
    });

    expect((await resend.contacts.get({ email: 'ann@example.com' })).data).toMatchObject({
      first_name: 'Ann',
      last_name: 'Lee',
      unsubscribed: false,
      properties: { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 3 } },
    });
    expect((await resend.contacts.get({ email: 'bob@example.com' })).data).toMatchObject({
      first_name: 'Bob, Jr.',
      last_name: null,
      unsubscribed: true,
      properties: {},
    });
    // Upserted: the cells given replace, the empty ones keep.
    expect((await resend.contacts.get(existing)).data).toMatchObject({
      first_name: 'Older',
      last_name: 'Timer',
      properties: { seats: { value: 10 } },
    });
    const members = (await resend.contacts.list({ segmentId: segment })).data!.data.map((c) => c.email).sort();
    expect(members).toEqual(['ann@example.com', 'bob@example.com', 'old@example.com']);
    const topics = (await resend.contacts.topics.list({ email: 'ann@example.com' })).data!.data;
    expect(topics.find((t) => t.id === topic)?.subscription).toBe('opt_out');
    // Imports emit no contact events (as at Resend).
    const events: unknown[] = await db.query(`SELECT 1 FROM resource_events WHERE type LIKE 'contact.%' AND data->>'email' = 'ann@example.com'`);
    expect(events).toEqual([]);

    const list = await resend.contacts.imports.list({ status: 'completed' });
    expect(list.data).toMatchObject({ object: 'list', has_more: false });
    expect(list.data!.data).toContainEqual(expect.objectContaining({ id: created.data!.id, status: 'completed', counts: report.data!.counts }));
    expect((await resend.contacts.imports.list({ status: 'failed' })).data!.data).toEqual([]);
  });

  it('follows column_map and on_conflict=skip, and writes a file of several chunks', async () => {
    const team = await api.team();
    await team.resend.contactProperties.create({ key: 'score', type: 'number' });
    await team.resend.contacts.create({ email: 'keep@example.com', firstName: 'Keep' });
    const rows = Array.from({ length: 2500 }, (_, i) => `row${i}@example.com;Person ${i};${i}`);
    const file = csv(['mail;given;points', 'keep@example.com;Changed;1', ...rows]);
    const created = await team.resend.contacts.imports.create({
      file,
      onConflict: 'skip',
      columnMap: { email: 'mail', firstName: 'given', properties: { score: { column: 'points', type: 'number' } } },
    });
    expect(created.error).toBeNull();
    const report = (await team.resend.contacts.imports.get(created.data!.id)).data!;
    expect(report).toMatchObject({ status: 'completed', counts: { total: 2501, created: 2500, updated: 0, skipped: 1, failed: 0 } });
    expect((await team.resend.contacts.get({ email: 'keep@example.com' })).data).toMatchObject({ first_name: 'Keep', properties: {} });
    expect((await team.resend.contacts.get({ email: 'row2499@example.com' })).data).toMatchObject({
      first_name: 'Person 2499',
      properties: { score: { type: 'number', value: 2499 } },
    });
  });

  it('refuses a bad form with 422 naming the field', async () => {
    const { resend } = acme;
    const good = () => csv(['email', 'x@example.com']);
    const cases: [Promise<{ error: unknown }>, string, string][] = [
      [resend.contacts.imports.create({ file: good(), onConflict: 'merge' as 'skip' }), 'validation_error', '`on_conflict`'],
      [resend.contacts.imports.create({ file: good(), columnMap: { email: 'address' } }), 'validation_error', '`column_map.email`'],
      [resend.contacts.imports.create({ file: csv(['name', 'Ann']) }), 'validation_error', '`email`'],
      [
        resend.contacts.imports.create({ file: good(), columnMap: { properties: { nosuch: { column: 'email' } } } }),
        'validation_error',
        '`column_map.properties.nosuch`',
      ],
      [resend.contacts.imports.create({ file: good(), segments: [{ id: randomUUID() }] }), 'validation_error', '`segments[0].id`'],
      [
        resend.contacts.imports.create({ file: good(), topics: [{ id: randomUUID(), subscription: 'opt_in' }] }),
        'validation_error',
        '`topics[0].id`',
      ],
      [resend.contacts.imports.create({ file: new Blob(['']) }), 'validation_error', '`file`'],
    ];
    for (const [request, name, field] of cases) {
      const { error } = await request;
      expect({ field, error }).toEqual({ field, error: expect.objectContaining({ statusCode: 422, name, message: expect.stringContaining(field) }) });
    }
    const noFile = await fetch(`${api.url}/contacts/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.token}` },
      body: new FormData(),
    });
    expect(noFile.status).toBe(422);
    expect(await noFile.json()).toMatchObject({ name: 'missing_required_field', message: expect.stringContaining('`file`') });
    expect((await resend.contacts.imports.get(randomUUID())).error).toMatchObject({ statusCode: 404 });
    expect((await resend.contacts.imports.list({ status: 'done' as 'completed' })).error).toMatchObject({
      statusCode: 422,
      message: expect.stringContaining('`status`'),
    });
  });
});
