import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { DataSource } from 'typeorm';
import { startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { finishedImport } from '../support/contact-imports';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;
const csv = (lines: string[]) => new Blob([lines.join('\r\n')], { type: 'text/csv' });

/** POST /contacts/imports (multipart CSV, written in the background) through the SDK's contacts.imports, on the real database. */
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
    expect(created.data).toEqual({ object: 'contact_import', id: expect.stringMatching(UUID), status: 'queued' });

    await finishedImport(resend, created.data!.id);
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
    const report = await finishedImport(team.resend, created.data!.id);
    expect(report).toMatchObject({ status: 'completed', counts: { total: 2501, created: 2500, updated: 0, skipped: 1, failed: 0 } });
    expect((await team.resend.contacts.get({ email: 'keep@example.com' })).data).toMatchObject({ first_name: 'Keep', properties: {} });
    expect((await team.resend.contacts.get({ email: 'row2499@example.com' })).data).toMatchObject({
      first_name: 'Person 2499',
      properties: { score: { type: 'number', value: 2499 } },
    });
  });

  it('answers 202 for a 20,000-row file while the import is still queued, then writes it in the background with exact counts and report', async () => {
    const team = await api.team();
    await team.resend.contacts.create({ email: 'p100@bulk.example', firstName: 'Before' });
    const ROWS = 20_000;
    const bad = (i: number) => i % 1000 === 999;
    const repeated = (i: number) => i === 12_345;
    const rows = Array.from({ length: ROWS }, (_, i) =>
      bad(i) ? `not-an-address-${i},X` : repeated(i) ? `P7@bulk.example,Again` : `p${i}@bulk.example,P${i}`,
    );
    const form = new FormData();
    form.append('file', csv(['email,first_name', ...rows]), 'bulk.csv');
    const answer = await fetch(`${api.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${team.token}` }, body: form });
    expect(answer.status).toBe(202);
    const taken = (await answer.json()) as { object: string; id: string; status: string };
    // The answer says what the import was when its file was stored: not a row written yet.
    expect(taken).toEqual({ object: 'contact_import', id: expect.stringMatching(UUID), status: 'queued' });
    const first = (await team.resend.contacts.imports.get(taken.id)).data!;
    expect(first.counts.total).toBe(ROWS);

    const report = await finishedImport(team.resend, taken.id, 120_000);
    const failed = rows.filter((_, i) => bad(i)).length;
    expect(report).toMatchObject({ status: 'completed', counts: { total: ROWS, created: ROWS - failed - 2, updated: 1, skipped: 1, failed } });
    const rejected = (report as unknown as { rejected_rows: { line: number; email: string | null; reason: string }[] }).rejected_rows;
    expect(rejected).toHaveLength(failed + 1);
    expect(rejected.filter((r) => r.email === 'p7@bulk.example')).toEqual([
      { line: 12_345 + 2, email: 'p7@bulk.example', reason: `The address appears on line ${7 + 2} already.` },
    ]);
    expect(rejected.filter((r) => r.email === null).map((r) => r.line)).toEqual(Array.from({ length: failed }, (_, k) => (k + 1) * 1000 - 1 + 2));
    const { count } = (await db.query(`SELECT count(*)::int AS count FROM contacts WHERE team_id = $1`, [team.teamId]))[0] as { count: number };
    expect(count).toBe(ROWS - failed - 1);
    expect((await team.resend.contacts.get({ email: 'p100@bulk.example' })).data).toMatchObject({ first_name: 'P100' });
    expect((await db.query(`SELECT count(*)::int AS n FROM contact_import_chunks WHERE import_id = $1`, [taken.id]))[0]).toEqual({ n: 0 });
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
    const latin1 = new FormData();
    latin1.append('file', new Blob([Buffer.from('email,first_name\nzo\xe9@example.com,Zo\xe9\n', 'latin1')], { type: 'text/csv' }), 'latin1.csv');
    const notUtf8 = await fetch(`${api.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${acme.token}` }, body: latin1 });
    expect({ status: notUtf8.status, body: await notUtf8.json() }).toMatchObject({
      status: 422,
      body: { message: expect.stringContaining('UTF-8') },
    });
    const cut = await fetch(`${api.url}/contacts/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.token}`, 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail\na@x.io\n',
    });
    expect({ status: cut.status, body: await cut.json() }).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringContaining('multipart') },
    });
    // A refused upload leaves none of its stored parts behind.
    expect(
      await db.query(
        `SELECT count(*)::int AS n FROM contact_import_chunks c WHERE NOT EXISTS (SELECT 1 FROM contact_imports i WHERE i.id = c.import_id)`,
      ),
    ).toEqual([{ n: 0 }]);
    expect((await resend.contacts.imports.get(randomUUID())).error).toMatchObject({ statusCode: 404 });
    expect((await resend.contacts.imports.list({ status: 'done' as 'completed' })).error).toMatchObject({
      statusCode: 422,
      message: expect.stringContaining('`status`'),
    });
  });

  it('answers 413 to a file over the body limit, with or without a Content-Length, and keeps none of it', async () => {
    const small = await startTestApi({ API_BODY_LIMIT_BYTES: String(64 * 1024) });
    try {
      const team = await small.team();
      const big = ['email', ...Array.from({ length: 5000 }, (_, i) => `big${i}@example.com`)].join('\n');
      const form = new FormData();
      form.append('file', new Blob([big], { type: 'text/csv' }), 'big.csv');
      const sized = await fetch(`${small.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${team.token}` }, body: form });
      expect({ status: sized.status, body: await sized.json() }).toMatchObject({
        status: 413,
        body: { statusCode: 413, name: 'validation_error', message: `The request body must not be larger than ${64 * 1024} bytes.` },
      });
      // The same body streamed (chunked, no Content-Length): counted as it arrives.
      const encoded = new Response(form);
      const streamed = await fetch(`${small.url}/contacts/imports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${team.token}`, 'content-type': encoded.headers.get('content-type')! },
        body: encoded.body,
        duplex: 'half',
      } as RequestInit);
      expect({ status: streamed.status, body: await streamed.json() }).toMatchObject({
        status: 413,
        body: { statusCode: 413, name: 'validation_error', message: `The request body must not be larger than ${64 * 1024} bytes.` },
      });
      const db = small.app.get(DataSource);
      expect(await db.query(`SELECT count(*)::int AS n FROM contact_import_chunks`)).toEqual([{ n: 0 }]);
      expect(await db.query(`SELECT count(*)::int AS n FROM contact_imports WHERE team_id = $1`, [team.teamId])).toEqual([{ n: 0 }]);
    } finally {
      await small.close();
    }
  });

  it('drops what it stored of an upload the client gave up half-way', async () => {
    const team = await api.team();
    const form = new FormData();
    const rows = Array.from({ length: 50_000 }, (_, i) => `gone${i}@example.com,Gone ${i}`);
    form.append('file', new Blob([['email,first_name', ...rows].join('\n')], { type: 'text/csv' }), 'gone.csv');
    const encoded = new Response(form);
    const bytes = Buffer.from(await encoded.arrayBuffer());
    // A plain HTTP client (fetch's pool would keep a spare connection the server's close waits for): the first ~1.5 MB, more than
    // one batch of parts to store, then the connection is dropped.
    const upload = request(`${api.url}/contacts/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.token}`, 'content-type': encoded.headers.get('content-type')!, 'content-length': bytes.length },
    });
    const failed = new Promise((resolve) => upload.on('error', resolve));
    upload.write(bytes.subarray(0, 1_500_000));
    await new Promise((resolve) => setTimeout(resolve, 300));
    upload.destroy();
    await failed;
    const orphans = () =>
      db.query(`SELECT count(*)::int AS n FROM contact_import_chunks c WHERE NOT EXISTS (SELECT 1 FROM contact_imports i WHERE i.id = c.import_id)`);
    const deadline = Date.now() + 10_000;
    while ((await orphans())[0].n !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await orphans()).toEqual([{ n: 0 }]);
    expect(await db.query(`SELECT count(*)::int AS n FROM contact_imports WHERE team_id = $1`, [team.teamId])).toEqual([{ n: 0 }]);
  });
});
