import { randomUUID } from 'crypto';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { Json, OpenApiDocument } from '../support/openapi-document';

import {
  API_ROUTES,
  OPERATOR_ROUTES,
  UNSUBSCRIBE_ROUTES,
  SEND_ROUTES,
  REQUEST_BODIES,
  BODY_TYPES,
  KEY_ERRORS,
  ERROR_STATUSES,
  KNOWN_PARAMETERS,
  SUCCESS_STATUS,
} from './openapi-expectations';

const PUBLIC_API_URL = 'https://api.herald.test';

/** The array branch of a property that may also be null (`anyOf: [array, null]`). */
const arrayBranch = (property: Json): Json => (property.type === 'array' ? property : property.anyOf.find((s: Json) => s.type === 'array'));

/** `/openapi.json` against the API that serves it: its routes, parameters, bodies and error responses. */
describe('the OpenAPI document', () => {
  let api: TestApi;
  let acme: TestTeam;
  let doc: Json;
  let document: OpenApiDocument;

  const operations = () => document.operations();
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

  it('is OpenAPI 3 with the bearer key applied globally and the public URL as server', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info).toMatchObject({ title: 'Herald API', version: expect.any(String) });
    expect(doc.info.description).toContain('Authorization: Bearer hr_');
    expect(doc.info.description).toContain('ratelimit-remaining');
    expect(doc.servers).toEqual([{ url: PUBLIC_API_URL }]);
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.tags.map((t: Json) => t.name)).toEqual([
      'emails',
      'api-keys',
      'domains',
      'suppressions',
      'webhooks',
      'contacts',
      'segments',
      'topics',
      'contact-properties',
      'audiences',
      'broadcasts',
      'stats',
      'unsubscribe',
      'operations',
    ]);
  });

  it('lists exactly the routes the API serves, and the API serves each of them', async () => {
    expect(
      operations()
        .map(([route]) => route)
        .sort(),
    ).toEqual([...API_ROUTES, ...OPERATOR_ROUTES, ...UNSUBSCRIBE_ROUTES].sort());
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
    // The unsubscribe pages: a forged token changes nothing (404, an HTML page, as documented); `test` is a test send's link.
    for (const route of UNSUBSCRIBE_ROUTES) {
      const [method, path] = route.split(' ');
      for (const [token, status] of [
        ['forged', 404],
        ['test', 200],
      ] as const) {
        const served = await fetch(`${api.url}${path!.replace('{token}', token)}`, { method: method!.toUpperCase() });
        const type = served.headers.get('content-type');
        expect({ route, token, status: served.status, type }).toEqual({ route, token, status, type: 'text/html; charset=utf-8' });
        expect(Object.keys(operation(route).responses[String(status)].content)).toEqual(['text/html']);
      }
    }
  });

  it('marks the operator routes public and tagged, and every API route with an operation id and a tag', () => {
    for (const [route, op] of operations()) {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      const expected = OPERATOR_ROUTES.includes(route)
        ? { security: [], tags: ['operations'] }
        : UNSUBSCRIBE_ROUTES.includes(route)
          ? { security: [], tags: ['unsubscribe'] }
          : {
              security: undefined,
              tags: [
                expect.stringMatching(
                  /^(emails|api-keys|domains|webhooks|suppressions|contacts|segments|topics|contact-properties|audiences|broadcasts|stats)$/,
                ),
              ],
            };
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
    expect(query.map((p: Json) => [p.name, p.required])).toEqual([
      ['limit', false],
      ['after', false],
      ['before', false],
    ]);
    expect(query[0].schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    const domains = operation('get /domains').parameters.filter((p: Json) => p.in === 'query');
    expect(domains.map((p: Json) => [p.name, p.required])).toEqual([
      ['limit', false],
      ['after', false],
      ['before', false],
    ]);
    expect(domains[0].schema).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    for (const [route, op] of operations()) {
      for (const p of op.parameters ?? []) expect(KNOWN_PARAMETERS).toContain(p.name);
    }
    expect(Object.keys(doc.components.schemas)).not.toContain('Object');
  });

  it('gives each request body its schema, and no body to the other operations', () => {
    for (const [route, op] of operations()) {
      const body = REQUEST_BODIES[route];
      const content = op.requestBody?.content ?? {};
      const ref = content[BODY_TYPES[route] ?? 'application/json']?.schema?.$ref;
      expect({ route, ref, types: Object.keys(content).length }).toEqual({ route, ref: body && `#/components/schemas/${body}`, types: body ? 1 : 0 });
    }
    expect(schema('SendEmailRequest').required).toEqual(['from', 'to', 'subject']);
    expect(schema('SendBatchRequest')).toMatchObject({ type: 'array', maxItems: 100, items: { $ref: '#/components/schemas/BatchEmail' } });
    expect(Object.keys(schema('BatchEmail').properties)).not.toContain('attachments');
    expect(arrayBranch(schema('SendEmailRequest').properties.tags).maxItems).toBe(75);
  });

  it('describes the error responses of every API operation with the error body', () => {
    const errorNames = schema('Error').properties.name.enum;
    expect(errorNames).toEqual(
      expect.arrayContaining(['validation_error', 'missing_api_key', 'restricted_api_key', 'invalid_idempotent_request', 'rate_limit_exceeded']),
    );
    for (const [route, errors] of Object.entries(ERROR_STATUSES)) {
      const success = SUCCESS_STATUS[route] ?? '200';
      const expected = [success, ...errors.map(String)];
      const responses = operation(route).responses;
      expect({ route, statuses: Object.keys(responses).sort() }).toEqual({ route, statuses: [...expected].sort() });
      for (const status of expected.filter((s) => s !== success)) {
        const content = responses[status].content['application/json'];
        expect(content.schema).toEqual({ $ref: '#/components/schemas/Error' });
        expect(document.responseProblems(route, status, content.example)).toEqual([]);
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
    expect(refs.filter((ref) => !ref.startsWith('#/') || document.resolve({ $ref: ref }) === undefined)).toEqual([]);
  });
});
