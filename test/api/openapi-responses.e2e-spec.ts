import { randomUUID } from 'crypto';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { WebhookMessagesRepository } from '@herald/webhooks';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { Json, OpenApiDocument } from '../support/openapi-document';
import { finishedImport } from '../support/contact-imports';

const PUBLIC_API_URL = 'https://api.herald.test';

/** Real answers of the running API, each validated against the schema /openapi.json documents for it. */
describe('the OpenAPI document, against real responses', () => {
  let api: TestApi;
  let acme: TestTeam;
  let doc: Json;
  let document: OpenApiDocument;

  const operation = (route: string) => document.operation(route);
  const schema = (name: string) => document.schema(name);
  /** The routes whose success answer (200, or 202 for an upload taken in the background) a test has validated: every API route must be among them. */
  const answered = new Set<string>();
  const okProblems = (route: string, body: unknown, status = 200) => {
    answered.add(route);
    return document.responseProblems(route, status, body);
  };

  beforeAll(async () => {
    api = await startTestApi({ PUBLIC_API_URL });
    const response = await call(api.url, null, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    doc = response.body;
    document = new OpenApiDocument(doc);
    // The team owns (verified) the domain the documented examples send from, so they can be sent as they are.
    const exampleFrom: string = schema('SendEmailRequest').example.from;
    acme = await api.team({ domain: exampleFrom.replace(/^.*@/, '').replace(/>$/, '') });
  });
  afterAll(async () => {
    await api.close();
  });

  it('accepts a send built from the documented example, and answers in the documented shapes', async () => {
    const example = schema('SendEmailRequest').example;
    expect(document.problemsOf('SendEmailRequest', example)).toEqual([]);
    const sent = await call(api.url, acme.token, 'POST', '/emails', example, { 'Idempotency-Key': `openapi-${randomUUID()}` });
    expect(sent.status).toBe(200);
    expect(okProblems('post /emails', sent.body)).toEqual([]);

    const email = await call(api.url, acme.token, 'GET', `/emails/${sent.body.id}`);
    expect(email.status).toBe(200);
    expect(okProblems('get /emails/{id}', email.body)).toEqual([]);
    const insights = await call(api.url, acme.token, 'GET', `/emails/${sent.body.id}/insights`);
    expect(insights.status).toBe(200);
    expect(okProblems('get /emails/{id}/insights', insights.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/emails?limit=5');
    expect(okProblems('get /emails', page.body)).toEqual([]);

    const batchBody = schema('SendBatchRequest').example;
    expect(document.problemsOf('SendBatchRequest', batchBody)).toEqual([]);
    const batch = await call(api.url, acme.token, 'POST', '/emails/batch', batchBody, { 'x-batch-validation': 'permissive' });
    expect(batch.status).toBe(200);
    expect(okProblems('post /emails/batch', batch.body)).toEqual([]);

    const scheduled = await call(api.url, acme.token, 'POST', '/emails', { ...example, scheduled_at: 'in 1 hour' });
    const reschedule = schema('UpdateEmailRequest').properties.scheduled_at.example;
    const updated = await call(api.url, acme.token, 'PATCH', `/emails/${scheduled.body.id}`, { scheduled_at: reschedule });
    expect(okProblems('patch /emails/{id}', updated.body)).toEqual([]);
    const canceled = await call(api.url, acme.token, 'POST', `/emails/${scheduled.body.id}/cancel`);
    expect(okProblems('post /emails/{id}/cancel', canceled.body)).toEqual([]);
  });

  it('answers the API key routes and errors in the documented shapes', async () => {
    const created = await call(api.url, acme.token, 'POST', '/api-keys', { name: 'Docs', permission: 'sending_access' });
    expect(created.status).toBe(200);
    expect(okProblems('post /api-keys', created.body)).toEqual([]);
    const keys = await call(api.url, acme.token, 'GET', '/api-keys');
    expect(okProblems('get /api-keys', keys.body)).toEqual([]);
    const renamed = await call(api.url, acme.token, 'PATCH', `/api-keys/${created.body.id}`, { name: 'Docs 2' });
    expect(okProblems('patch /api-keys/{id}', renamed.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/api-keys/${created.body.id}`);
    expect(okProblems('delete /api-keys/{id}', deleted.body)).toEqual([]);

    const errors = [
      await call(api.url, null, 'GET', '/emails'),
      await call(api.url, acme.token, 'POST', '/emails', { from: 'nobody' }),
      await call(api.url, acme.token, 'GET', `/emails/${randomUUID()}`),
      await call(api.url, acme.token, 'POST', '/emails', schema('SendEmailRequest').example, { 'Idempotency-Key': '' }),
    ];
    expect(errors.map((e) => e.status)).toEqual([401, 422, 404, 400]);
    for (const error of errors) expect(document.problemsOf('Error', error.body)).toEqual([]);
  });

  it('answers the domain routes in the documented shapes, the Herald extensions included', async () => {
    const example = schema('CreateDomainRequest').example;
    expect(document.problemsOf('CreateDomainRequest', example)).toEqual([]);
    const name = `openapi-${randomUUID().slice(0, 8)}.example`;
    const body = { ...example, name, tracking_subdomain: 'links', dkim_algorithms: ['rsa-sha256', 'ed25519-sha256'] };
    expect(document.problemsOf('CreateDomainRequest', body)).toEqual([]);
    const created = await call(api.url, acme.token, 'POST', '/domains', body);
    expect(created.status).toBe(200);
    expect(okProblems('post /domains', created.body)).toEqual([]);
    const id = created.body.id;

    const page = await call(api.url, acme.token, 'GET', '/domains');
    expect(okProblems('get /domains', page.body)).toEqual([]);
    const update = schema('UpdateDomainRequest').example;
    expect(document.problemsOf('UpdateDomainRequest', update)).toEqual([]);
    const updated = await call(api.url, acme.token, 'PATCH', `/domains/${id}`, update);
    expect(okProblems('patch /domains/{id}', updated.body)).toEqual([]);
    const verified = await call(api.url, acme.token, 'POST', `/domains/${id}/verify`);
    expect(okProblems('post /domains/{id}/verify', verified.body)).toEqual([]);
    const rotated = await call(api.url, acme.token, 'POST', `/domains/${id}/dkim/rotate`);
    expect(okProblems('post /domains/{id}/dkim/rotate', rotated.body)).toEqual([]);
    const got = await call(api.url, acme.token, 'GET', `/domains/${id}`);
    expect(got.body.records.length).toBeGreaterThan(created.body.records.length);
    expect(okProblems('get /domains/{id}', got.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/domains/${id}`);
    expect(okProblems('delete /domains/{id}', deleted.body)).toEqual([]);

    const region = await call(api.url, acme.token, 'POST', '/domains', { name, region: 'nowhere-1' });
    expect(region.status).toBe(422);
    expect(document.problemsOf('Error', region.body)).toEqual([]);
  });

  it('answers the webhook routes in the documented shapes', async () => {
    const body = document.resolve(operation('post /webhooks').requestBody.content['application/json'].schema);
    const example = { endpoint: body.properties.endpoint.example, events: body.properties.events.example };
    expect(document.problemsAt(document.pointer('post /webhooks', 'requestBody', 'content', 'application/json', 'schema'), example)).toEqual([]);
    const created = await call(api.url, acme.token, 'POST', '/webhooks', example);
    expect(created.status).toBe(200);
    expect(okProblems('post /webhooks', created.body)).toEqual([]);
    const id = created.body.id;
    const got = await call(api.url, acme.token, 'GET', `/webhooks/${id}`);
    expect(okProblems('get /webhooks/{id}', got.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/webhooks?limit=5');
    expect(okProblems('get /webhooks', page.body)).toEqual([]);
    const updated = await call(api.url, acme.token, 'PATCH', `/webhooks/${id}`, { status: 'disabled' });
    expect(okProblems('patch /webhooks/{id}', updated.body)).toEqual([]);
    const rotated = await call(api.url, acme.token, 'POST', `/webhooks/${id}/signing-secret/rotate`);
    expect(okProblems('post /webhooks/{id}/signing-secret/rotate', rotated.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/webhooks/${id}`);
    expect(okProblems('delete /webhooks/{id}', deleted.body)).toEqual([]);
    const invalid = await call(api.url, acme.token, 'POST', '/webhooks', { endpoint: 'https://example.com', events: ['nope'] });
    expect(invalid.status).toBe(422);
    expect(document.problemsOf('Error', invalid.body)).toEqual([]);
  });

  it('answers the suppression routes in the documented shapes', async () => {
    const address = `openapi-${randomUUID().slice(0, 8)}@example.com`;
    const added = await call(api.url, acme.token, 'POST', '/suppressions', { email: address });
    expect(added.status).toBe(200);
    expect(okProblems('post /suppressions', added.body)).toEqual([]);
    const got = await call(api.url, acme.token, 'GET', `/suppressions/${encodeURIComponent(address)}`);
    expect(okProblems('get /suppressions/{idOrEmail}', got.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/suppressions?limit=5');
    expect(page.body.data.length).toBeGreaterThan(0);
    expect(okProblems('get /suppressions', page.body)).toEqual([]);
    const removed = await call(api.url, acme.token, 'DELETE', `/suppressions/${added.body.id}`);
    expect(okProblems('delete /suppressions/{idOrEmail}', removed.body)).toEqual([]);

    const more = [`a-${address}`, `b-${address}`];
    const batchAdded = await call(api.url, acme.token, 'POST', '/suppressions/batch/add', { emails: more });
    expect(batchAdded.body.data).toHaveLength(2);
    expect(okProblems('post /suppressions/batch/add', batchAdded.body)).toEqual([]);
    const batchRemoved = await call(api.url, acme.token, 'POST', '/suppressions/batch/remove', { emails: more });
    expect(batchRemoved.body.data).toHaveLength(2);
    expect(okProblems('post /suppressions/batch/remove', batchRemoved.body)).toEqual([]);
  });

  it("answers a webhook's event log routes in the documented shapes", async () => {
    const webhook = await call(api.url, acme.token, 'POST', '/webhooks', { endpoint: 'https://example.com/log', events: ['email.sent'] });
    const id: string = webhook.body.id;
    // The webhooks role writes the log; here one event is fanned out and one attempt recorded as it would.
    const messages = new WebhookMessagesRepository(api.app.get(EmailPlanes), api.app.get(DataSource));
    const payload = { type: 'email.sent', created_at: new Date().toISOString(), data: { email_id: randomUUID() } };
    expect(await messages.fanOut({ id: randomUUID(), teamId: acme.teamId, type: 'email.sent', payload })).toBe(1);

    const events = await call(api.url, acme.token, 'GET', `/webhooks/${id}/events`);
    expect(events.body.data).toHaveLength(1);
    expect(okProblems('get /webhooks/{id}/events', events.body)).toEqual([]);
    const eventId: string = events.body.data[0].id;
    const attempt = { messageId: eventId, attempt: 1, statusCode: 500, error: null, responseExcerpt: 'busy', durationMs: 12, sentAt: new Date() };
    await messages.recordAttempt(
      { id: eventId, webhookId: id },
      attempt,
      { status: 'pending', nextAttemptAt: new Date(Date.now() + 60_000) },
      3_600_000,
    );

    const event = await call(api.url, acme.token, 'GET', `/webhooks/${id}/events/${eventId}`);
    expect(event.body).toMatchObject({ status: 'pending', next_attempt_at: expect.any(String), payload });
    expect(okProblems('get /webhooks/{id}/events/{eventId}', event.body)).toEqual([]);
    const attempts = await call(api.url, acme.token, 'GET', `/webhooks/${id}/events/${eventId}/attempts`);
    expect(attempts.body.data).toHaveLength(1);
    expect(okProblems('get /webhooks/{id}/events/{eventId}/attempts', attempts.body)).toEqual([]);
    const replayed = await call(api.url, acme.token, 'POST', `/webhooks/${id}/events/${eventId}/replay`);
    expect(replayed.status).toBe(200);
    expect(okProblems('post /webhooks/{id}/events/{eventId}/replay', replayed.body)).toEqual([]);
  });
  it('answers the broadcast, contact import and audience routes in the documented shapes', async () => {
    const ok = async (route: string, path: string, body?: unknown) => {
      const reply = await call(api.url, acme.token, route.split(' ')[0]!.toUpperCase(), path, body);
      expect({ route, status: reply.status }).toEqual({ route, status: 200 });
      expect({ route, problems: okProblems(route, reply.body) }).toEqual({ route, problems: [] });
      return reply.body;
    };
    const segment = await ok('post /audiences', '/audiences', { name: 'Docs readers' });
    await ok('get /audiences', '/audiences');
    await ok('get /audiences/{id}', `/audiences/${segment.id}`);
    const contact = await ok('post /audiences/{id}/contacts', `/audiences/${segment.id}/contacts`, { email: `r-${randomUUID()}@example.com` });
    await ok('get /audiences/{id}/contacts', `/audiences/${segment.id}/contacts`);
    await ok('get /audiences/{id}/contacts/{idOrEmail}', `/audiences/${segment.id}/contacts/${contact.id}`);

    const form = new FormData();
    form.append('file', new Blob(['email,first_name\nok@example.com,Ok\nnot-an-address,No\n'], { type: 'text/csv' }), 'contacts.csv');
    const imported = await fetch(`${api.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${acme.token}` }, body: form });
    expect(imported.status).toBe(202);
    const reference = (await imported.json()) as { id: string };
    expect(okProblems('post /contacts/imports', reference, 202)).toEqual([]);
    await finishedImport(acme.resend, reference.id);
    const report = await ok('get /contacts/imports/{id}', `/contacts/imports/${reference.id}`);
    expect(report).toMatchObject({ status: 'completed', counts: { total: 2, created: 1, failed: 1 }, rejected_rows: [{ line: 3 }] });
    await ok('get /contacts/imports', '/contacts/imports?limit=5');

    const from: string = schema('SendEmailRequest').example.from;
    const draft = { from, subject: 'Docs', segment_id: segment.id, html: '<p>Hi</p>' };
    const created = await ok('post /broadcasts', '/broadcasts', draft);
    await ok('get /broadcasts/{id}', `/broadcasts/${created.id}`);
    await ok('get /broadcasts', '/broadcasts?limit=5');
    await ok('get /broadcasts/{id}/recipients', `/broadcasts/${created.id}/recipients?type=sent`);
    await ok('get /broadcasts/{id}/clicked-links', `/broadcasts/${created.id}/clicked-links`);
    const copy = await ok('post /broadcasts/{id}/duplicate', `/broadcasts/${created.id}/duplicate`);
    await ok('post /broadcasts/{id}/send', `/broadcasts/${copy.id}/send`, { scheduled_at: 'in 1 day' });
    await ok('post /broadcasts/{id}/cancel', `/broadcasts/${copy.id}/cancel`);
    await ok('delete /broadcasts/{id}', `/broadcasts/${copy.id}`);

    await ok('delete /audiences/{id}/contacts/{idOrEmail}', `/audiences/${segment.id}/contacts/${contact.id}`);
    await ok('delete /audiences/{id}', `/audiences/${segment.id}`);
  });
});
