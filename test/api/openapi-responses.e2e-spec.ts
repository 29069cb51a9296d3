import { randomUUID } from 'crypto';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { Json, OpenApiDocument } from '../support/openapi-document';

const PUBLIC_API_URL = 'https://api.herald.test';

/** Real answers of the running API, each validated against the schema /openapi.json documents for it. */
describe('the OpenAPI document, against real responses', () => {
  let api: TestApi;
  let acme: TestTeam;
  let doc: Json;
  let document: OpenApiDocument;

  const operation = (route: string) => document.operation(route);
  const schema = (name: string) => document.schema(name);

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
    expect(document.responseProblems('post /emails', 200, sent.body)).toEqual([]);

    const email = await call(api.url, acme.token, 'GET', `/emails/${sent.body.id}`);
    expect(email.status).toBe(200);
    expect(document.responseProblems('get /emails/{id}', 200, email.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/emails?limit=5');
    expect(document.responseProblems('get /emails', 200, page.body)).toEqual([]);

    const batchBody = schema('SendBatchRequest').example;
    expect(document.problemsOf('SendBatchRequest', batchBody)).toEqual([]);
    const batch = await call(api.url, acme.token, 'POST', '/emails/batch', batchBody, { 'x-batch-validation': 'permissive' });
    expect(batch.status).toBe(200);
    expect(document.responseProblems('post /emails/batch', 200, batch.body)).toEqual([]);

    const scheduled = await call(api.url, acme.token, 'POST', '/emails', { ...example, scheduled_at: 'in 1 hour' });
    const reschedule = schema('UpdateEmailRequest').properties.scheduled_at.example;
    const updated = await call(api.url, acme.token, 'PATCH', `/emails/${scheduled.body.id}`, { scheduled_at: reschedule });
    expect(document.responseProblems('patch /emails/{id}', 200, updated.body)).toEqual([]);
    const canceled = await call(api.url, acme.token, 'POST', `/emails/${scheduled.body.id}/cancel`);
    expect(document.responseProblems('post /emails/{id}/cancel', 200, canceled.body)).toEqual([]);
  });

  it('answers the API key routes and errors in the documented shapes', async () => {
    const created = await call(api.url, acme.token, 'POST', '/api-keys', { name: 'Docs', permission: 'sending_access' });
    expect(created.status).toBe(200);
    expect(document.responseProblems('post /api-keys', 200, created.body)).toEqual([]);
    const keys = await call(api.url, acme.token, 'GET', '/api-keys');
    expect(document.responseProblems('get /api-keys', 200, keys.body)).toEqual([]);
    const renamed = await call(api.url, acme.token, 'PATCH', `/api-keys/${created.body.id}`, { name: 'Docs 2' });
    expect(document.responseProblems('patch /api-keys/{id}', 200, renamed.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/api-keys/${created.body.id}`);
    expect(document.responseProblems('delete /api-keys/{id}', 200, deleted.body)).toEqual([]);

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
    expect(document.responseProblems('post /domains', 200, created.body)).toEqual([]);
    const id = created.body.id;

    const page = await call(api.url, acme.token, 'GET', '/domains');
    expect(document.responseProblems('get /domains', 200, page.body)).toEqual([]);
    const update = schema('UpdateDomainRequest').example;
    expect(document.problemsOf('UpdateDomainRequest', update)).toEqual([]);
    const updated = await call(api.url, acme.token, 'PATCH', `/domains/${id}`, update);
    expect(document.responseProblems('patch /domains/{id}', 200, updated.body)).toEqual([]);
    const verified = await call(api.url, acme.token, 'POST', `/domains/${id}/verify`);
    expect(document.responseProblems('post /domains/{id}/verify', 200, verified.body)).toEqual([]);
    const rotated = await call(api.url, acme.token, 'POST', `/domains/${id}/dkim/rotate`);
    expect(document.responseProblems('post /domains/{id}/dkim/rotate', 200, rotated.body)).toEqual([]);
    const got = await call(api.url, acme.token, 'GET', `/domains/${id}`);
    expect(got.body.records.length).toBeGreaterThan(created.body.records.length);
    expect(document.responseProblems('get /domains/{id}', 200, got.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/domains/${id}`);
    expect(document.responseProblems('delete /domains/{id}', 200, deleted.body)).toEqual([]);

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
    expect(document.responseProblems('post /webhooks', 200, created.body)).toEqual([]);
    const id = created.body.id;
    const got = await call(api.url, acme.token, 'GET', `/webhooks/${id}`);
    expect(document.responseProblems('get /webhooks/{id}', 200, got.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/webhooks?limit=5');
    expect(document.responseProblems('get /webhooks', 200, page.body)).toEqual([]);
    const updated = await call(api.url, acme.token, 'PATCH', `/webhooks/${id}`, { status: 'disabled' });
    expect(document.responseProblems('patch /webhooks/{id}', 200, updated.body)).toEqual([]);
    const rotated = await call(api.url, acme.token, 'POST', `/webhooks/${id}/signing-secret/rotate`);
    expect(document.responseProblems('post /webhooks/{id}/signing-secret/rotate', 200, rotated.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/webhooks/${id}`);
    expect(document.responseProblems('delete /webhooks/{id}', 200, deleted.body)).toEqual([]);
    const invalid = await call(api.url, acme.token, 'POST', '/webhooks', { endpoint: 'https://example.com', events: ['nope'] });
    expect(invalid.status).toBe(422);
    expect(document.problemsOf('Error', invalid.body)).toEqual([]);
  });
});
