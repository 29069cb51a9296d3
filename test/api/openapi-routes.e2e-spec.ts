import { randomUUID } from 'crypto';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { Json, OpenApiDocument } from '../support/openapi-document';

const API_ROUTES = [
  'post /emails',
  'get /emails',
  'post /emails/batch',
  'get /emails/{id}',
  'get /emails/{id}/insights',
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
  'post /domains/{id}/resume',
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
  'get /stats',
  'post /contacts',
  'get /contacts',
  'get /contacts/{idOrEmail}',
  'patch /contacts/{idOrEmail}',
  'delete /contacts/{idOrEmail}',
  'get /contacts/{idOrEmail}/topics',
  'patch /contacts/{idOrEmail}/topics',
  'get /contacts/{idOrEmail}/segments',
  'post /contacts/{idOrEmail}/segments/{segmentId}',
  'delete /contacts/{idOrEmail}/segments/{segmentId}',
  'post /segments',
  'get /segments',
  'get /segments/{id}',
  'patch /segments/{id}',
  'delete /segments/{id}',
  'get /segments/{id}/contacts',
  'post /topics',
  'get /topics',
  'get /topics/{id}',
  'patch /topics/{id}',
  'delete /topics/{id}',
  'post /contact-properties',
  'get /contact-properties',
  'get /contact-properties/{id}',
  'patch /contact-properties/{id}',
  'delete /contact-properties/{id}',
];
const OPERATOR_ROUTES = ['get /health/live', 'get /health/ready', 'get /openapi.json'];
const SEND_ROUTES = ['post /emails', 'post /emails/batch'];
const REQUEST_BODIES: Record<string, string> = {
  'post /emails': 'SendEmailRequest',
  'post /emails/batch': 'SendBatchRequest',
  'patch /emails/{id}': 'UpdateEmailRequest',
  'post /api-keys': 'CreateApiKeyRequest',
  'patch /api-keys/{id}': 'UpdateApiKeyRequest',
  'post /domains': 'CreateDomainRequest',
  'patch /domains/{id}': 'UpdateDomainRequest',
  'post /webhooks': 'CreateWebhookRequest',
  'patch /webhooks/{id}': 'UpdateWebhookRequest',
  'post /suppressions': 'AddSuppressionRequest',
  'post /suppressions/batch/add': 'AddSuppressionsRequest',
  'post /suppressions/batch/remove': 'RemoveSuppressionsRequest',
  'post /contacts': 'CreateContactRequest',
  'patch /contacts/{idOrEmail}': 'UpdateContactRequest',
  'patch /contacts/{idOrEmail}/topics': 'UpdateContactTopicsRequest',
  'post /segments': 'SegmentRequest',
  'patch /segments/{id}': 'SegmentRequest',
  'post /topics': 'CreateTopicRequest',
  'patch /topics/{id}': 'UpdateTopicRequest',
  'post /contact-properties': 'CreateContactPropertyRequest',
  'patch /contact-properties/{id}': 'UpdateContactPropertyRequest',
};
const KEY_ERRORS = [401, 403, 429];
const ERROR_STATUSES: Record<string, number[]> = {
  'post /emails': [...KEY_ERRORS, 400, 409, 413, 422, 503],
  'post /emails/batch': [...KEY_ERRORS, 400, 409, 413, 422, 503],
  'get /emails': [...KEY_ERRORS, 422],
  'get /emails/{id}': [...KEY_ERRORS, 404, 422],
  'get /emails/{id}/insights': [...KEY_ERRORS, 404, 422],
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
  'post /contacts': [...KEY_ERRORS, 422],
  'get /contacts': [...KEY_ERRORS, 422],
  'get /contacts/{idOrEmail}': [...KEY_ERRORS, 404, 422],
  'patch /contacts/{idOrEmail}': [...KEY_ERRORS, 404, 422],
  'delete /contacts/{idOrEmail}': [...KEY_ERRORS, 404, 422],
  'get /contacts/{idOrEmail}/topics': [...KEY_ERRORS, 404, 422],
  'patch /contacts/{idOrEmail}/topics': [...KEY_ERRORS, 404, 422],
  'get /contacts/{idOrEmail}/segments': [...KEY_ERRORS, 404, 422],
  'post /contacts/{idOrEmail}/segments/{segmentId}': [...KEY_ERRORS, 404, 422],
  'delete /contacts/{idOrEmail}/segments/{segmentId}': [...KEY_ERRORS, 404, 422],
  'post /segments': [...KEY_ERRORS, 422],
  'get /segments': [...KEY_ERRORS, 422],
  'get /segments/{id}': [...KEY_ERRORS, 404, 422],
  'patch /segments/{id}': [...KEY_ERRORS, 404, 422],
  'delete /segments/{id}': [...KEY_ERRORS, 404, 422],
  'get /segments/{id}/contacts': [...KEY_ERRORS, 404, 422],
  'post /topics': [...KEY_ERRORS, 422],
  'get /topics': [...KEY_ERRORS, 422],
  'get /topics/{id}': [...KEY_ERRORS, 404, 422],
  'patch /topics/{id}': [...KEY_ERRORS, 404, 422],
  'delete /topics/{id}': [...KEY_ERRORS, 404, 422],
  'post /contact-properties': [...KEY_ERRORS, 422],
  'get /contact-properties': [...KEY_ERRORS, 422],
  'get /contact-properties/{id}': [...KEY_ERRORS, 404, 422],
  'patch /contact-properties/{id}': [...KEY_ERRORS, 404, 422],
  'delete /contact-properties/{id}': [...KEY_ERRORS, 404, 422],
};
const KNOWN_PARAMETERS = [
  'id',
  'eventId',
  'idOrEmail',
  'segmentId',
  'origin',
  'limit',
  'after',
  'before',
  'Idempotency-Key',
  'x-batch-validation',
  'from',
  'to',
  'granularity',
  'domain_id',
  'region',
];
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
      'stats',
      'operations',
    ]);
  });

  it('lists exactly the routes the API serves, and the API serves each of them', async () => {
    expect(
      operations()
        .map(([route]) => route)
        .sort(),
    ).toEqual([...API_ROUTES, ...OPERATOR_ROUTES].sort());
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
        : {
            security: undefined,
            tags: [expect.stringMatching(/^(emails|api-keys|domains|webhooks|suppressions|contacts|segments|topics|contact-properties|stats)$/)],
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
      const ref = op.requestBody?.content?.['application/json']?.schema?.$ref;
      expect({ route, ref }).toEqual({ route, ref: body && `#/components/schemas/${body}` });
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
      const expected = ['200', ...errors.map(String)];
      const responses = operation(route).responses;
      expect({ route, statuses: Object.keys(responses).sort() }).toEqual({ route, statuses: [...expected].sort() });
      for (const status of expected.filter((s) => s !== '200')) {
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
