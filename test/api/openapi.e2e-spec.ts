import { randomUUID } from 'crypto';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';

/** The document as JSON: the spec walks it generically, so a typed model would only get in the way. */
type Json = any;

const API_ROUTES = [
  'post /emails',
  'get /emails',
  'post /emails/batch',
  'get /emails/{id}',
  'patch /emails/{id}',
  'post /emails/{id}/cancel',
  'post /api-keys',
  'get /api-keys',
  'patch /api-keys/{id}',
  'delete /api-keys/{id}',
  'post /domains',
  'get /domains',
  'get /domains/{id}',
  'patch /domains/{id}',
  'delete /domains/{id}',
  'post /domains/{id}/verify',
  'post /domains/{id}/dkim/rotate',
  'post /suppressions',
  'get /suppressions',
  'get /suppressions/{idOrEmail}',
  'delete /suppressions/{idOrEmail}',
  'post /suppressions/batch/add',
  'post /suppressions/batch/remove',
  'post /webhooks',
  'get /webhooks',
  'get /webhooks/{id}',
  'patch /webhooks/{id}',
  'delete /webhooks/{id}',
  'post /webhooks/{id}/signing-secret/rotate',
  'get /webhooks/{id}/events',
  'get /webhooks/{id}/events/{eventId}',
  'post /webhooks/{id}/events/{eventId}/replay',
  'get /webhooks/{id}/events/{eventId}/attempts',
];
const OPERATOR_ROUTES = ['get /health/live', 'get /health/ready', 'get /metrics', 'get /openapi.json'];
const SEND_ROUTES = ['post /emails', 'post /emails/batch'];
const REQUEST_BODIES: Record<string, string> = {
  'post /emails': 'SendEmailRequest',
  'post /emails/batch': 'SendBatchRequest',
  'patch /emails/{id}': 'UpdateEmailRequest',
  'post /api-keys': 'CreateApiKeyRequest',
  'patch /api-keys/{id}': 'UpdateApiKeyRequest',
  'post /domains': 'CreateDomainRequest',
  'patch /domains/{id}': 'UpdateDomainRequest',
};
const KEY_ERRORS = [401, 403, 429];
const ERROR_STATUSES: Record<string, number[]> = {
  'post /emails': [...KEY_ERRORS, 400, 409, 413, 422, 503],
  'post /emails/batch': [...KEY_ERRORS, 400, 409, 413, 422, 503],
  'get /emails': [...KEY_ERRORS, 422],
  'get /emails/{id}': [...KEY_ERRORS, 404, 422],
  'patch /emails/{id}': [...KEY_ERRORS, 404, 422],
  'post /emails/{id}/cancel': [...KEY_ERRORS, 404, 422],
  'post /api-keys': [...KEY_ERRORS, 422],
  'get /api-keys': KEY_ERRORS,
  'patch /api-keys/{id}': [...KEY_ERRORS, 404, 422],
  'delete /api-keys/{id}': [...KEY_ERRORS, 404, 422],
  'post /domains': [...KEY_ERRORS, 422],
  'get /domains': [...KEY_ERRORS, 422],
  'get /domains/{id}': [...KEY_ERRORS, 404, 422],
  'patch /domains/{id}': [...KEY_ERRORS, 404, 422],
  'delete /domains/{id}': [...KEY_ERRORS, 404, 422],
  'post /domains/{id}/verify': [...KEY_ERRORS, 404, 422],
  'post /domains/{id}/dkim/rotate': [...KEY_ERRORS, 404, 422],
  'post /suppressions': [...KEY_ERRORS, 422],
  'get /suppressions': [...KEY_ERRORS, 422],
  'get /suppressions/{idOrEmail}': [...KEY_ERRORS, 404, 422],
  'delete /suppressions/{idOrEmail}': [...KEY_ERRORS, 404, 422],
  'post /suppressions/batch/add': [...KEY_ERRORS, 422],
  'post /suppressions/batch/remove': [...KEY_ERRORS, 422],
  'post /webhooks': [...KEY_ERRORS, 422],
  'get /webhooks': [...KEY_ERRORS, 422],
  'get /webhooks/{id}': [...KEY_ERRORS, 404, 422],
  'patch /webhooks/{id}': [...KEY_ERRORS, 404, 422],
  'delete /webhooks/{id}': [...KEY_ERRORS, 404, 422],
  'post /webhooks/{id}/signing-secret/rotate': [...KEY_ERRORS, 404, 422],
  'get /webhooks/{id}/events': [...KEY_ERRORS, 404, 422],
  'get /webhooks/{id}/events/{eventId}': [...KEY_ERRORS, 404, 422],
  'post /webhooks/{id}/events/{eventId}/replay': [...KEY_ERRORS, 404, 422],
  'get /webhooks/{id}/events/{eventId}/attempts': [...KEY_ERRORS, 404, 422],
};
const KNOWN_PARAMETERS = ['id', 'eventId', 'idOrEmail', 'origin', 'limit', 'after', 'before', 'Idempotency-Key', 'x-batch-validation'];
const PUBLIC_API_URL = 'https://api.herald.test';

/** `/openapi.json` against the API that serves it: the routes, and the shapes it really answers with. */
describe('the OpenAPI document', () => {
  let api: TestApi;
  let acme: TestTeam;
  let doc: Json;

  const operations = (): [string, Json][] =>
    Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]): [string, Json] => [`${method} ${path}`, op]),
    );
  const operation = (route: string): Json => {
    const [method, path] = route.split(' ');
    return doc.paths[path][method];
  };
  const resolve = (ref: string): Json =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Json, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  const schema = (name: string): Json => doc.components.schemas[name];
  const okSchema = (route: string): Json => operation(route).responses['200'].content['application/json'].schema;

  /** What is wrong with `value` against a schema, for the OpenAPI 3.0 keywords the document uses. */
  function problems(s: Json, value: unknown, at = '$'): string[] {
    if (s.$ref) return problems(resolve(s.$ref), value, at);
    // OpenAPI 3.1: a nullable schema lists 'null' among its types.
    const types: string[] = [s.type ?? []].flat();
    if (value === null) return types.includes('null') ? [] : [`${at} is null`];
    if (s.oneOf) {
      const matches = s.oneOf.filter((option: Json) => problems(option, value, at).length === 0).length;
      return matches === 1 ? [] : [`${at} matches ${matches} of its oneOf schemas`];
    }
    const type = Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
    if (types.length && !types.includes(type) && !(types.includes('number') && type === 'integer')) return [`${at} is a ${type}, not a ${types.join(' or ')}`];
    const out: string[] = [];
    if (s.enum && !s.enum.includes(value)) out.push(`${at} is not one of ${s.enum.join(', ')}`);
    if (typeof value === 'string') {
      if (s.pattern && !new RegExp(s.pattern).test(value)) out.push(`${at} does not match ${s.pattern}`);
      if (value.length < (s.minLength ?? 0) || value.length > (s.maxLength ?? Infinity)) out.push(`${at} has a bad length`);
    }
    if (Array.isArray(value)) {
      if (value.length < (s.minItems ?? 0) || value.length > (s.maxItems ?? Infinity)) out.push(`${at} has a bad item count`);
      value.forEach((item, i) => out.push(...problems(s.items ?? {}, item, `${at}[${i}]`)));
    }
    if (type === 'object') {
      const object = value as Record<string, unknown>;
      for (const key of s.required ?? []) if (!(key in object)) out.push(`${at}.${key} is missing`);
      for (const [key, item] of Object.entries(object)) {
        const property = s.properties?.[key] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : null);
        if (property) out.push(...problems(property, item, `${at}.${key}`));
        else if (s.properties) out.push(`${at}.${key} is not documented`);
      }
    }
    return out;
  }

  beforeAll(async () => {
    api = await startTestApi({ PUBLIC_API_URL });
    const response = await call(api.url, null, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    doc = response.body;
    // The team owns (verified) the domain the documented examples send from, so they can be sent as they are.
    const exampleFrom: string = schema('SendEmailRequest').example.from;
    acme = await api.team({ domain: exampleFrom.replace(/^.*@/, '').replace(/>$/, '') });
  });
  afterAll(async () => {
    await api.close();
  });

  it('is OpenAPI 3 with the bearer key applied globally and the public URL as server', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info).toMatchObject({ title: 'Herald API', version: expect.any(String) });
    expect(doc.info.description).toContain('Authorization: Bearer hr_');
    expect(doc.info.description).toContain('ratelimit-remaining');
    expect(doc.servers).toEqual([{ url: PUBLIC_API_URL }]);
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.tags.map((t: Json) => t.name)).toEqual(['emails', 'api-keys', 'domains', 'suppressions', 'webhooks', 'operations']);
  });

  it('lists exactly the routes the API serves, and the API serves each of them', async () => {
    expect(operations().map(([route]) => route).sort()).toEqual([...API_ROUTES, ...OPERATOR_ROUTES].sort());
    const unknown = await call(api.url, acme.token, 'GET', '/no-such-endpoint');
    expect(unknown.status).toBe(404);
    for (const route of API_ROUTES) {
      const [method, path] = route.split(' ');
      const served = await call(api.url, acme.token, method.toUpperCase(), path.replace('{id}', randomUUID()));
      expect({ route, status: served.status, message: served.body.message }).not.toMatchObject({ message: unknown.body.message });
      expect({ route, status: served.status }).not.toEqual({ route, status: 405 });
    }
    for (const route of OPERATOR_ROUTES) {
      const served = await fetch(`${api.url}${route.split(' ')[1]}`);
      expect({ route, status: served.status }).toEqual({ route, status: 200 });
    }
  });

  it('marks the operator routes public and tagged, and every API route with an operation id and a tag', () => {
    for (const [route, op] of operations()) {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      const expected = OPERATOR_ROUTES.includes(route)
        ? { security: [], tags: ['operations'] }
        : { security: undefined, tags: [expect.stringMatching(/^(emails|api-keys|domains|webhooks|suppressions)$/)] };
      expect({ route, security: op.security, tags: op.tags }).toEqual({ route, ...expected });
    }
  });

  it('declares Idempotency-Key and x-batch-validation as optional headers, once each, on the send endpoints only', () => {
    for (const [route, op] of operations()) {
      const headers = (op.parameters ?? []).filter((p: Json) => p.in === 'header');
      const expected = SEND_ROUTES.includes(route) ? ['Idempotency-Key'] : [];
      if (route === 'post /emails/batch') expected.push('x-batch-validation');
      expect({ route, headers: headers.map((h: Json) => h.name) }).toEqual({ route, headers: expected });
      for (const h of headers) expect({ route, name: h.name, required: h.required }).toEqual({ route, name: h.name, required: false });
    }
    const [idempotencyKey, batchValidation] = operation('post /emails/batch').parameters;
    expect(idempotencyKey.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 256 });
    expect(batchValidation.schema).toEqual({ type: 'string', enum: ['strict', 'permissive'], default: 'strict' });
  });

  it('declares the pagination query of GET /emails and GET /domains and nothing reflected from `unknown` params', () => {
    const query = operation('get /emails').parameters.filter((p: Json) => p.in === 'query');
    expect(query.map((p: Json) => [p.name, p.required])).toEqual([['limit', false], ['after', false], ['before', false]]);
    expect(query[0].schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    const domains = operation('get /domains').parameters.filter((p: Json) => p.in === 'query');
    expect(domains.map((p: Json) => [p.name, p.required])).toEqual([['limit', false], ['after', false], ['before', false]]);
    expect(domains[0].schema).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    for (const [route, op] of operations()) {
      for (const p of op.parameters ?? []) expect(KNOWN_PARAMETERS).toContain(p.name);
    }
    expect(Object.keys(doc.components.schemas)).not.toContain('Object');
  });

  it('gives each request body its schema, and no body to the other operations', () => {
    for (const [route, op] of operations()) {
      const body = REQUEST_BODIES[route];
      const ref = op.requestBody?.content?.['application/json']?.schema?.$ref;
      expect({ route, ref }).toEqual({ route, ref: body && `#/components/schemas/${body}` });
    }
    expect(schema('SendEmailRequest').required).toEqual(['from', 'to', 'subject']);
    expect(schema('SendBatchRequest')).toMatchObject({ type: 'array', maxItems: 100, items: { $ref: '#/components/schemas/BatchEmail' } });
    expect(Object.keys(schema('BatchEmail').properties)).not.toContain('attachments');
    expect(schema('SendEmailRequest').properties.tags.maxItems).toBe(75);
  });

  it('describes the error responses of every API operation with the error body', () => {
    const errorNames = schema('Error').properties.name.enum;
    expect(errorNames).toEqual(
      expect.arrayContaining(['validation_error', 'missing_api_key', 'restricted_api_key', 'invalid_idempotent_request', 'rate_limit_exceeded']),
    );
    for (const [route, errors] of Object.entries(ERROR_STATUSES)) {
      const expected = ['200', ...errors.map(String)];
      const responses = operation(route).responses;
      expect({ route, statuses: Object.keys(responses).sort() }).toEqual({ route, statuses: [...expected].sort() });
      for (const status of expected.filter((s) => s !== '200')) {
        const content = responses[status].content['application/json'];
        expect(content.schema).toEqual({ $ref: '#/components/schemas/Error' });
        expect(problems(content.schema, content.example)).toEqual([]);
        expect(content.example.statusCode).toBe(Number(status));
      }
    }
  });

  it('resolves every $ref', () => {
    const refs: string[] = [];
    const walk = (node: Json): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof node.$ref === 'string') refs.push(node.$ref);
        Object.values(node).forEach(walk);
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(20);
    expect(refs.filter((ref) => !ref.startsWith('#/') || resolve(ref) === undefined)).toEqual([]);
  });

  it('accepts a send built from the documented example, and answers in the documented shapes', async () => {
    const example = schema('SendEmailRequest').example;
    expect(problems(schema('SendEmailRequest'), example)).toEqual([]);
    const sent = await call(api.url, acme.token, 'POST', '/emails', example, { 'Idempotency-Key': `openapi-${randomUUID()}` });
    expect(sent.status).toBe(200);
    expect(problems(okSchema('post /emails'), sent.body)).toEqual([]);

    const email = await call(api.url, acme.token, 'GET', `/emails/${sent.body.id}`);
    expect(email.status).toBe(200);
    expect(problems(okSchema('get /emails/{id}'), email.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/emails?limit=5');
    expect(problems(okSchema('get /emails'), page.body)).toEqual([]);

    const batchBody = schema('SendBatchRequest').example;
    expect(problems(schema('SendBatchRequest'), batchBody)).toEqual([]);
    const batch = await call(api.url, acme.token, 'POST', '/emails/batch', batchBody, { 'x-batch-validation': 'permissive' });
    expect(batch.status).toBe(200);
    expect(problems(okSchema('post /emails/batch'), batch.body)).toEqual([]);

    const scheduled = await call(api.url, acme.token, 'POST', '/emails', { ...example, scheduled_at: 'in 1 hour' });
    const reschedule = schema('UpdateEmailRequest').properties.scheduled_at.example;
    const updated = await call(api.url, acme.token, 'PATCH', `/emails/${scheduled.body.id}`, { scheduled_at: reschedule });
    expect(problems(okSchema('patch /emails/{id}'), updated.body)).toEqual([]);
    const canceled = await call(api.url, acme.token, 'POST', `/emails/${scheduled.body.id}/cancel`);
    expect(problems(okSchema('post /emails/{id}/cancel'), canceled.body)).toEqual([]);
  });

  it('answers the API key routes and errors in the documented shapes', async () => {
    const created = await call(api.url, acme.token, 'POST', '/api-keys', { name: 'Docs', permission: 'sending_access' });
    expect(created.status).toBe(200);
    expect(problems(okSchema('post /api-keys'), created.body)).toEqual([]);
    const keys = await call(api.url, acme.token, 'GET', '/api-keys');
    expect(problems(okSchema('get /api-keys'), keys.body)).toEqual([]);
    const renamed = await call(api.url, acme.token, 'PATCH', `/api-keys/${created.body.id}`, { name: 'Docs 2' });
    expect(problems(okSchema('patch /api-keys/{id}'), renamed.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/api-keys/${created.body.id}`);
    expect(problems(okSchema('delete /api-keys/{id}'), deleted.body)).toEqual([]);

    const errors = [
      await call(api.url, null, 'GET', '/emails'),
      await call(api.url, acme.token, 'POST', '/emails', { from: 'nobody' }),
      await call(api.url, acme.token, 'GET', `/emails/${randomUUID()}`),
      await call(api.url, acme.token, 'POST', '/emails', schema('SendEmailRequest').example, { 'Idempotency-Key': '' }),
    ];
    expect(errors.map((e) => e.status)).toEqual([401, 422, 404, 400]);
    for (const error of errors) expect(problems(schema('Error'), error.body)).toEqual([]);
  });

  it('answers the domain routes in the documented shapes, the Herald extensions included', async () => {
    const example = schema('CreateDomainRequest').example;
    expect(problems(schema('CreateDomainRequest'), example)).toEqual([]);
    const name = `openapi-${randomUUID().slice(0, 8)}.example`;
    const body = { ...example, name, tracking_subdomain: 'links', dkim_algorithms: ['rsa-sha256', 'ed25519-sha256'] };
    expect(problems(schema('CreateDomainRequest'), body)).toEqual([]);
    const created = await call(api.url, acme.token, 'POST', '/domains', body);
    expect(created.status).toBe(200);
    expect(problems(okSchema('post /domains'), created.body)).toEqual([]);
    const id = created.body.id;

    const page = await call(api.url, acme.token, 'GET', '/domains');
    expect(problems(okSchema('get /domains'), page.body)).toEqual([]);
    const update = schema('UpdateDomainRequest').example;
    expect(problems(schema('UpdateDomainRequest'), update)).toEqual([]);
    const updated = await call(api.url, acme.token, 'PATCH', `/domains/${id}`, update);
    expect(problems(okSchema('patch /domains/{id}'), updated.body)).toEqual([]);
    const verified = await call(api.url, acme.token, 'POST', `/domains/${id}/verify`);
    expect(problems(okSchema('post /domains/{id}/verify'), verified.body)).toEqual([]);
    const rotated = await call(api.url, acme.token, 'POST', `/domains/${id}/dkim/rotate`);
    expect(problems(okSchema('post /domains/{id}/dkim/rotate'), rotated.body)).toEqual([]);
    const got = await call(api.url, acme.token, 'GET', `/domains/${id}`);
    expect(got.body.records.length).toBeGreaterThan(created.body.records.length);
    expect(problems(okSchema('get /domains/{id}'), got.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/domains/${id}`);
    expect(problems(okSchema('delete /domains/{id}'), deleted.body)).toEqual([]);

    const region = await call(api.url, acme.token, 'POST', '/domains', { name, region: 'nowhere-1' });
    expect(region.status).toBe(422);
    expect(problems(schema('Error'), region.body)).toEqual([]);
  });

  it('answers the webhook routes in the documented shapes', async () => {
    const body = operation('post /webhooks').requestBody.content['application/json'].schema;
    const example = { endpoint: body.properties.endpoint.example, events: body.properties.events.example };
    expect(problems(body, example)).toEqual([]);
    const created = await call(api.url, acme.token, 'POST', '/webhooks', example);
    expect(created.status).toBe(200);
    expect(problems(okSchema('post /webhooks'), created.body)).toEqual([]);
    const id = created.body.id;
    const got = await call(api.url, acme.token, 'GET', `/webhooks/${id}`);
    expect(problems(okSchema('get /webhooks/{id}'), got.body)).toEqual([]);
    const page = await call(api.url, acme.token, 'GET', '/webhooks?limit=5');
    expect(problems(okSchema('get /webhooks'), page.body)).toEqual([]);
    const updated = await call(api.url, acme.token, 'PATCH', `/webhooks/${id}`, { status: 'disabled' });
    expect(problems(okSchema('patch /webhooks/{id}'), updated.body)).toEqual([]);
    const rotated = await call(api.url, acme.token, 'POST', `/webhooks/${id}/signing-secret/rotate`);
    expect(problems(okSchema('post /webhooks/{id}/signing-secret/rotate'), rotated.body)).toEqual([]);
    const deleted = await call(api.url, acme.token, 'DELETE', `/webhooks/${id}`);
    expect(problems(okSchema('delete /webhooks/{id}'), deleted.body)).toEqual([]);
    const invalid = await call(api.url, acme.token, 'POST', '/webhooks', { endpoint: 'https://example.com', events: ['nope'] });
    expect(invalid.status).toBe(422);
    expect(problems(schema('Error'), invalid.body)).toEqual([]);
  });
});
