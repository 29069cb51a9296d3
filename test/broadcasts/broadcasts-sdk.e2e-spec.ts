import { randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { call, startTestApi, type TestApi, type TestTeam, UUID } from '../support/api-harness';
import { TestAudience } from './audience';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;

/** The official `resend` package drives every broadcasts method against Herald. */
describe('broadcasts through the resend SDK', () => {
  let api: TestApi;
  let acme: TestTeam;
  let audience: TestAudience;
  let segmentId: string;
  let topicId: string;

  beforeAll(async () => {
    api = await startTestApi();
    acme = await api.team();
    audience = new TestAudience(api.app, acme.teamId);
    segmentId = await audience.segment();
    topicId = await audience.topic();
  });
  afterAll(async () => {
    await api.close();
  });

  const draft = (overrides: Record<string, unknown> = {}) => ({
    name: 'June news',
    segmentId,
    from: `Acme <${acme.from('news')}>`,
    subject: 'Hi {{{contact.first_name|there}}}',
    html: '<p>Hello {{{contact.first_name|there}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
    ...overrides,
  });

  it('creates a draft, reads it, updates it, lists it and deletes it', async () => {
    const created = await acme.resend.broadcasts.create({ ...draft(), replyTo: 'help@acme.test', previewText: 'This month', topicId });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'broadcast', id: expect.stringMatching(UUID) });
    const id = created.data!.id;

    const got = await acme.resend.broadcasts.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'broadcast',
      id,
      name: 'June news',
      segment_id: segmentId,
      audience_id: segmentId,
      topic_id: topicId,
      from: `Acme <${acme.from('news')}>`,
      subject: 'Hi {{{contact.first_name|there}}}',
      reply_to: ['help@acme.test'],
      preview_text: 'This month',
      status: 'draft',
      scheduled_at: null,
      sent_at: null,
      text: null,
    });
    expect(got.data!.created_at).toMatch(REST_TIME);

    const updated = await acme.resend.broadcasts.update(id, {
      subject: 'Hello {{{contact.first_name|you}}}',
      text: 'Plain {{{contact.first_name}}}',
    });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ object: 'broadcast', id });
    const after = await acme.resend.broadcasts.get(id);
    expect(after.data).toMatchObject({ subject: 'Hello {{{contact.first_name|you}}}', text: 'Plain {{{contact.first_name}}}', name: 'June news' });

    const other = await acme.resend.broadcasts.create(draft({ name: 'Second' }));
    const list = await acme.resend.broadcasts.list({ limit: 1 });
    expect(list.error).toBeNull();
    expect(list.data).toMatchObject({ object: 'list', has_more: true, data: [{ id: other.data!.id, name: 'Second', status: 'draft' }] });
    const next = await acme.resend.broadcasts.list({ limit: 1, after: other.data!.id });
    expect(next.data!.data.map((b) => b.id)).toEqual([id]);

    const copy = await acme.resend.broadcasts.duplicate(id);
    expect(copy.error).toBeNull();
    expect(copy.data).toEqual({ object: 'broadcast', id: expect.stringMatching(UUID) });
    expect((await acme.resend.broadcasts.get(copy.data!.id)).data).toMatchObject({
      status: 'draft',
      subject: after.data!.subject,
      text: after.data!.text,
    });
    await acme.resend.broadcasts.remove(copy.data!.id);

    const removed = await acme.resend.broadcasts.remove(id);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ object: 'broadcast', id, deleted: true });
    expect((await acme.resend.broadcasts.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('schedules a draft, refuses to update or delete it, cancels it', async () => {
    const { data } = await acme.resend.broadcasts.create(draft());
    const id = data!.id;
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const sent = await acme.resend.broadcasts.send(id, { scheduledAt: at });
    expect(sent.error).toBeNull();
    expect(sent.data).toEqual({ object: 'broadcast', id });
    const scheduled = await acme.resend.broadcasts.get(id);
    expect(scheduled.data).toMatchObject({ status: 'scheduled', scheduled_at: expect.stringMatching(REST_TIME) });

    expect((await acme.resend.broadcasts.update(id, { subject: 'Too late' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: 'Only a draft broadcast can be updated; this one is scheduled.',
    });
    expect((await acme.resend.broadcasts.remove(id)).error).toMatchObject({ statusCode: 422, message: expect.stringContaining('cancel it first') });

    const cancelled = await acme.resend.broadcasts.cancel(id);
    expect(cancelled.error).toBeNull();
    expect(cancelled.data).toEqual({ object: 'broadcast', id });
    expect((await acme.resend.broadcasts.get(id)).data).toMatchObject({ status: 'cancelled' });
    expect((await acme.resend.broadcasts.cancel(id)).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await acme.resend.broadcasts.remove(id)).data).toEqual({ object: 'broadcast', id, deleted: true });
  });

  it('creates with send: true and scheduled_at in natural language', async () => {
    const { data, error } = await acme.resend.broadcasts.create({ ...draft(), send: true, scheduledAt: 'in 2 hours' });
    expect(error).toBeNull();
    const got = await acme.resend.broadcasts.get(data!.id);
    expect(got.data!.status).toBe('scheduled');
    expect(new Date(`${got.data!.scheduled_at!.replace(' ', 'T').slice(0, 23)}Z`).getTime()).toBeGreaterThan(Date.now() + 7_000_000);
    await acme.resend.broadcasts.cancel(data!.id);
  });

  it('fans a scheduled broadcast out once it is due (the api role polls every second)', async () => {
    await audience.contact({ email: 'due@inbox.test', first_name: 'Dee', segments: [{ id: segmentId }] });
    const { data } = await acme.resend.broadcasts.create({ ...draft(), send: true, scheduledAt: 'in 2 seconds' });
    expect((await acme.resend.broadcasts.get(data!.id)).data!.status).toBe('scheduled');
    const deadline = Date.now() + 15_000;
    let got = await acme.resend.broadcasts.get(data!.id);
    while (got.data!.status !== 'sent' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      got = await acme.resend.broadcasts.get(data!.id);
    }
    expect(got.data).toMatchObject({ status: 'sent', sent_at: expect.stringMatching(REST_TIME), counts: { recipients: 1 } });
    const emails = await acme.resend.emails.list();
    expect(emails.data!.data.find((e) => e.to[0] === 'due@inbox.test')).toMatchObject({ subject: 'Hi Dee' });
  });

  it('answers 422 naming the field for each bad input', async () => {
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ ...draft(), from: undefined }, 422, 'missing_required_field', /`from`/],
      [{ ...draft(), subject: undefined }, 422, 'missing_required_field', /`subject`/],
      [{ ...draft(), segmentId: undefined }, 422, 'missing_required_field', /`segment_id`/],
      [{ ...draft(), html: undefined }, 422, 'missing_required_field', /`html`, `text` or `document`/],
      [{ ...draft(), from: 'not an address' }, 422, 'invalid_from_address', /`from`/],
      [{ ...draft(), segmentId: 'nope' }, 422, 'validation_error', /`segment_id` field must be a valid UUID/],
      [{ ...draft(), segmentId: randomUUID() }, 422, 'validation_error', /`segment_id` field names no segment/],
      [{ ...draft(), topicId: randomUUID() }, 422, 'validation_error', /`topic_id` field names no topic/],
      [{ ...draft(), replyTo: ['ok@acme.test', 'bad'] }, 422, 'validation_error', /`reply_to`/],
      [{ ...draft(), subject: 42 }, 422, 'validation_error', /`subject` field must be a `string`/],
      [{ ...draft(), name: 'x'.repeat(300) }, 422, 'validation_error', /`name` field must be at most 256/],
      [{ ...draft(), scheduledAt: 'in 1 hour' }, 422, 'validation_error', /`scheduled_at` field can only be used with `send: true`/],
      [{ ...draft(), send: true, scheduledAt: 'whenever' }, 422, 'validation_error', /`scheduled_at`/],
      [{ ...draft(), send: 'yes' }, 422, 'validation_error', /`send` field must be a `boolean`/],
      [{ ...draft(), from: 'news@unverified.test', send: true }, 403, 'validation_error', /unverified\.test domain is not verified/],
    ];
    for (const [payload, statusCode, name, message] of cases) {
      const { error } = await acme.resend.broadcasts.create(payload as never);
      expect({ payload, error }).toMatchObject({ payload, error: { statusCode, name, message: expect.stringMatching(message) } });
    }
    const raw = await call(api.url, acme.token, 'POST', '/broadcasts', { ...draft(), segment_id: segmentId, audience_id: randomUUID() });
    expect(raw).toMatchObject({ status: 422, body: { message: expect.stringMatching(/`segment_id` and `audience_id`/) } });
    const document = await call(api.url, acme.token, 'POST', '/broadcasts', {
      from: acme.from('news'),
      subject: 's',
      segment_id: segmentId,
      document: { type: 'doc', content: [{ type: 'table' }] },
    });
    expect(document).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringMatching(/^Invalid `document` field: document/) },
    });
    expect((await acme.resend.broadcasts.get('nope')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await acme.resend.broadcasts.get(randomUUID())).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await acme.resend.broadcasts.list({ limit: 0 } as never)).error).toMatchObject({ statusCode: 422 });
  });

  it('takes the legacy audience_id, and an editor document rendered when sent', async () => {
    const document = {
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Hi ' },
            { type: 'mergeTag', attrs: { key: 'contact.first_name', fallback: 'there' } },
          ],
        },
      ],
    };
    const created = await call(api.url, acme.token, 'POST', '/broadcasts', {
      from: acme.from('news'),
      subject: 'Doc',
      audience_id: segmentId,
      document,
    });
    expect(created.status).toBe(200);
    const got = await call(api.url, acme.token, 'GET', `/broadcasts/${created.body.id}`);
    expect(got.body).toMatchObject({ segment_id: segmentId, document, html: null, status: 'draft' });
    await call(api.url, acme.token, 'POST', `/broadcasts/${created.body.id}/send`, { scheduled_at: 'in 1 day' });
    const sent = await call(api.url, acme.token, 'GET', `/broadcasts/${created.body.id}`);
    expect(sent.body.status).toBe('scheduled');
    expect(sent.body.html).toContain('{{{contact.first_name|there}}}');
    expect(sent.body.text).toContain('Hi {{{contact.first_name|there}}}');
  });

  it('is for full-access keys: a sending-only key gets 401 restricted_api_key, as at Resend', async () => {
    const sending = new Resend(await api.key(acme.teamId, 'sending_access'), { baseUrl: api.url });
    expect((await sending.broadcasts.list()).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
    expect((await sending.broadcasts.create(draft())).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
  });

  it("keeps teams apart: another team's broadcast is not found", async () => {
    const other = await api.team();
    const { data } = await acme.resend.broadcasts.create(draft());
    expect((await other.resend.broadcasts.get(data!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.resend.broadcasts.remove(data!.id)).error).toMatchObject({ statusCode: 404 });
  });
});
