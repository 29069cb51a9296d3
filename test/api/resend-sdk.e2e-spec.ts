import { OpsServer } from '@herald/observability';
import { Resend } from 'resend';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { NatsProbe } from '../support/nats-probe';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;

/** The official `resend` package, pointed at Herald, as the client for every endpoint of the send path. */
describe('the resend SDK against Herald', () => {
  let api: TestApi;
  let probe: NatsProbe;
  let acme: TestTeam;

  beforeAll(async () => {
    api = await startTestApi();
    probe = await NatsProbe.open(api.config);
    acme = await api.team();
  });
  afterAll(async () => {
    await probe.close();
    await api.close();
  });

  it('sends an email, reads it back and finds its send command on the region stream', async () => {
    const sent = await acme.resend.emails.send({
      from: `Acme <${acme.from('hello')}>`,
      to: 'jane@example.com',
      cc: ['bob@example.com'],
      replyTo: 'support@acme.test',
      subject: 'Welcome',
      html: '<p>Hi Jane</p>',
      text: 'Hi Jane',
      headers: { 'X-Entity-Ref-ID': 'abc-1' },
      tags: [{ name: 'category', value: 'welcome' }],
    });
    expect(sent.error).toBeNull();
    expect(sent.data!.id).toMatch(UUID);
    expect(sent.headers?.['ratelimit-limit']).toBe('10000');

    const got = await acme.resend.emails.get(sent.data!.id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'email',
      id: sent.data!.id,
      from: `Acme <${acme.from('hello')}>`,
      to: ['jane@example.com'],
      cc: ['bob@example.com'],
      bcc: null,
      reply_to: ['support@acme.test'],
      subject: 'Welcome',
      html: '<p>Hi Jane</p>',
      text: 'Hi Jane',
      last_event: 'queued',
      scheduled_at: null,
      tags: [{ name: 'category', value: 'welcome' }],
    });
    expect(got.data!.created_at).toMatch(REST_TIME);
    expect(await probe.sendCommands('us-east-1')).toContain(sent.data!.id);
  });

  it('replays an idempotent send with the same id and refuses the key with another payload', async () => {
    const email = { from: acme.from('hello'), to: ['a@example.com'], subject: 'Order 1', html: '<p>1</p>' };
    const first = await acme.resend.emails.send(email, { idempotencyKey: 'order-1/confirmation' });
    const again = await acme.resend.emails.send(email, { idempotencyKey: 'order-1/confirmation' });
    expect(again.data).toEqual(first.data);
    const other = await acme.resend.emails.send({ ...email, subject: 'Order 2' }, { idempotencyKey: 'order-1/confirmation' });
    expect(other.error).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
    const tooLong = await acme.resend.emails.send(email, { idempotencyKey: 'k'.repeat(257) });
    expect(tooLong.error).toMatchObject({ statusCode: 400, name: 'invalid_idempotency_key' });
  });

  it('sends a batch in strict mode, all or nothing', async () => {
    const ok = await acme.resend.batch.send([
      { from: acme.from('hello'), to: 'one@example.com', subject: 'One', html: '<p>1</p>' },
      { from: acme.from('hello'), to: 'two@example.com', subject: 'Two', text: '2' },
    ]);
    expect(ok.error).toBeNull();
    expect(ok.data!.data).toHaveLength(2);

    const bad = await acme.resend.batch.send([
      { from: acme.from('hello'), to: 'one@example.com', subject: 'One', html: '<p>1</p>' },
      { from: acme.from('hello'), to: 'not-an-address', subject: 'Two', html: '<p>2</p>' },
    ]);
    expect(bad.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(bad.error!.message).toContain('emails[1]');
    expect(bad.error!.message).toContain('`to`');
  });

  it('sends a batch in permissive mode: the valid emails go, the invalid are listed by index', async () => {
    const result = await acme.resend.batch.send(
      [
        { from: acme.from('hello'), to: 'one@example.com', subject: 'One', html: '<p>1</p>' },
        { from: acme.from('hello'), to: 'bad address', subject: 'Two', html: '<p>2</p>' },
        { from: acme.from('hello'), to: 'three@example.com', subject: 'Three', html: '<p>3</p>' },
      ],
      { batchValidation: 'permissive', idempotencyKey: 'batch-permissive-1' },
    );
    expect(result.error).toBeNull();
    expect(result.data!.data).toHaveLength(2);
    expect(result.data!.errors).toEqual([{ index: 1, message: expect.stringContaining('`to`') }]);
    const replay = await acme.resend.batch.send(
      [
        { from: acme.from('hello'), to: 'one@example.com', subject: 'One', html: '<p>1</p>' },
        { from: acme.from('hello'), to: 'bad address', subject: 'Two', html: '<p>2</p>' },
        { from: acme.from('hello'), to: 'three@example.com', subject: 'Three', html: '<p>3</p>' },
      ],
      { batchValidation: 'permissive', idempotencyKey: 'batch-permissive-1' },
    );
    expect(replay.data).toEqual(result.data);
  });

  it('schedules, reschedules and cancels an email', async () => {
    const inOneHour = new Date(Date.now() + 3600_000).toISOString();
    const sent = await acme.resend.emails.send({
      from: acme.from('hello'),
      to: 'later@example.com',
      subject: 'Later',
      html: '<p>later</p>',
      scheduledAt: inOneHour,
    });
    expect(sent.error).toBeNull();
    const id = sent.data!.id;
    expect((await acme.resend.emails.get(id)).data).toMatchObject({ last_event: 'scheduled' });
    expect(await probe.sendCommands('us-east-1')).not.toContain(id);

    const inTwoHours = new Date(Date.now() + 7200_000);
    const moved = await acme.resend.emails.update({ id, scheduledAt: inTwoHours.toISOString() });
    expect(moved).toMatchObject({ data: { object: 'email', id }, error: null });
    const afterMove = await acme.resend.emails.get(id);
    expect(new Date(afterMove.data!.scheduled_at!.replace(' ', 'T').replace('+00', 'Z')).getTime()).toBe(inTwoHours.getTime());

    expect(await acme.resend.emails.cancel(id)).toMatchObject({ data: { object: 'email', id }, error: null });
    expect((await acme.resend.emails.get(id)).data).toMatchObject({ last_event: 'canceled' });
    const again = await acme.resend.emails.cancel(id);
    expect(again.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  it('lists emails newest first with cursor pagination both ways', async () => {
    const team = await api.team();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await team.resend.emails.send({ from: team.from('a'), to: 'x@example.com', subject: `#${i}`, text: 'x' });
      ids.push(data!.id);
    }
    const newestFirst = [...ids].reverse();
    const page1 = await team.resend.emails.list({ limit: 2 });
    expect(page1.data).toMatchObject({ object: 'list', has_more: true });
    expect(page1.data!.data.map((e) => e.id)).toEqual(newestFirst.slice(0, 2));
    const page2 = await team.resend.emails.list({ limit: 2, after: newestFirst[1] });
    expect(page2.data!.data.map((e) => e.id)).toEqual(newestFirst.slice(2, 4));
    const page3 = await team.resend.emails.list({ limit: 2, after: newestFirst[3] });
    expect(page3.data).toMatchObject({ has_more: false });
    expect(page3.data!.data.map((e) => e.id)).toEqual(newestFirst.slice(4));
    const back = await team.resend.emails.list({ limit: 2, before: newestFirst[4] });
    expect(back.data!.data.map((e) => e.id)).toEqual(newestFirst.slice(2, 4));
    expect(back.data!.has_more).toBe(true);
    const bad = await team.resend.emails.list({ limit: 101 });
    expect(bad.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  it('manages API keys; a sending_access key can only send', async () => {
    const created = await acme.resend.apiKeys.create({ name: 'CI', permission: 'sending_access' });
    expect(created.error).toBeNull();
    expect(created.data!.token).toMatch(/^hr_/);
    const sender = new Resend(created.data!.token, { baseUrl: api.url });
    expect((await sender.emails.send({ from: acme.from('a'), to: 'x@example.com', subject: 's', text: 't' })).error).toBeNull();
    expect((await sender.emails.list()).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });

    const listed = await acme.resend.apiKeys.list();
    expect(listed.data!.data.map((k) => k.name)).toContain('CI');
    expect(await acme.resend.apiKeys.update(created.data!.id, { name: 'CI renamed' })).toMatchObject({
      data: { object: 'api_key', id: created.data!.id },
    });
    expect(await acme.resend.apiKeys.remove(created.data!.id)).toMatchObject({ data: { deleted: true } });
    expect((await acme.resend.apiKeys.list()).data!.data.map((k) => k.id)).not.toContain(created.data!.id);
  });

  it('answers key problems, unknown paths and wrong verbs with Resend error bodies', async () => {
    expect(await call(api.url, null, 'GET', '/emails')).toMatchObject({ status: 401, body: { name: 'missing_api_key' } });
    expect(await call(api.url, 'hr_nope', 'GET', '/emails')).toMatchObject({ status: 403, body: { name: 'invalid_api_key' } });
    expect(await call(api.url, acme.token, 'GET', '/nothing-here')).toMatchObject({ status: 404, body: { name: 'not_found' } });
    expect(await call(api.url, acme.token, 'DELETE', '/emails')).toMatchObject({ status: 405, body: { name: 'method_not_allowed' } });
    expect(await call(api.url, acme.token, 'GET', '/emails/not-a-uuid')).toMatchObject({ status: 422, body: { name: 'invalid_parameter' } });
    expect(await call(api.url, acme.token, 'GET', '/emails/6f1c7a3e-2a4b-4c1d-9e8f-0a1b2c3d4e5f')).toMatchObject({
      status: 404,
      body: { name: 'not_found' },
    });
    const broken = await call(api.url, acme.token, 'POST', '/emails', '{"from":', {});
    expect(broken).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect(broken.headers.get('ratelimit-limit')).toBe('10000');
    const nul = await call(api.url, acme.token, 'POST', '/emails', { from: acme.from(), to: 'a@example.com', subject: 'a\u0000b', text: 't' });
    expect(nul).toMatchObject({ status: 422, body: { name: 'validation_error', message: expect.stringContaining('`subject`') } });
    const escaped = await call(api.url, acme.token, 'POST', '/emails', { from: acme.from(), to: 'a@example.com', subject: 'a\\u0000b', text: 't' });
    expect(escaped.status).toBe(200);
    // The key is checked before the body is read: no parsing for a caller without one.
    expect(await call(api.url, null, 'POST', '/emails', '{"from":', {})).toMatchObject({ status: 401, body: { name: 'missing_api_key' } });
    expect(await call(api.url, acme.token, 'GET', '//emails')).toMatchObject({ status: 200 });
  });

  it('serves its OpenAPI document and health, and its metrics on the ops port only', async () => {
    const doc = await call(api.url, null, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/emails', '/emails/batch', '/emails/{id}', '/api-keys']));
    expect(await call(api.url, null, 'GET', '/health/ready')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Metrics are for operators: on the ops port, not on the public API port.
    expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
    const metrics = await fetch(`http://127.0.0.1:${api.app.get(OpsServer).port()}/metrics`);
    const text = await metrics.text();
    expect(text).toContain('herald_http_request_duration_seconds');
    expect(text).toMatch(/herald_emails_accepted_total\{[^}]*endpoint="POST \/emails"[^}]*\} [1-9]/);
    expect(text).toMatch(/herald_send_commands_published_total\{[^}]*outcome="acknowledged"[^}]*\} [1-9]/);
  });
});
