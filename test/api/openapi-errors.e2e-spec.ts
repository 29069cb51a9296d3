import { randomBytes, randomUUID } from 'crypto';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { Json, OpenApiDocument } from '../support/openapi-document';

/** Small enough to exceed cheaply; the documented 413 example states the deployment's limit. */
const BODY_LIMIT = 64 * 1024;

type Answer = Awaited<ReturnType<typeof call>>;

/**
 * Every 4xx example /openapi.json documents, provoked on its own route: the running API must
 * answer with exactly the documented body. (The 503 needs Redis down: test/api/redis-outage.)
 */
describe("the OpenAPI document's error examples", () => {
  let api: TestApi;
  let acme: TestTeam;
  let limited: TestTeam;
  let document: OpenApiDocument;

  beforeAll(async () => {
    api = await startTestApi({ API_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
    document = new OpenApiDocument((await call(api.url, null, 'GET', '/openapi.json')).body);
    const from: string = document.schema('SendEmailRequest').example.from;
    acme = await api.team({ domain: from.replace(/^.*@/, '').replace(/>$/, '') });
    // At the deployment's default rate, which the 429 example states.
    limited = await api.team({ rateLimit: api.config.RATE_LIMIT_DEFAULT });
  });
  afterAll(async () => {
    await api.close();
  });

  // JSON bodies only: a multipart import is refused before its form is read (401, 403, 429), or for not being one (422).
  const requestExample = (op: Json): unknown => {
    const media = op.requestBody?.content['application/json'];
    return media ? document.exampleOf(media.schema) : undefined;
  };
  /** The route's path with its parameters filled: unknown resources by default. */
  const path = (route: string, value: (param: string) => string = unknownId) =>
    route.split(' ')[1]!.replace(/\{(\w+)\}/g, (_, p: string) => value(p));
  const unknownId = (param: string) => (param === 'eventId' ? `msg_${randomBytes(16).toString('hex')}` : randomUUID());
  const send = (route: string, token: string | null, urlPath: string, body?: unknown, headers?: Record<string, string>) =>
    call(api.url, token, route.split(' ')[0]!.toUpperCase(), urlPath, body, headers);

  /** How each documented status is provoked on a route. */
  const provoke: Record<string, (route: string, op: Json) => Promise<Answer>> = {
    400: (route, op) => send(route, acme.token, path(route), requestExample(op), { 'Idempotency-Key': '' }),
    401: (route, op) => send(route, null, path(route), requestExample(op)),
    403: (route, op) => send(route, 'hr_not_a_key', path(route), requestExample(op)),
    404: (route, op) =>
      // GET /stats has no path parameter: an unknown domain is its 404.
      send(route, acme.token, route === 'get /stats' ? `/stats?domain_id=${randomUUID()}` : path(route), requestExample(op)),
    409: async (route, op) => {
      const key = { 'Idempotency-Key': `errors-${randomUUID()}` };
      const first = requestExample(op);
      await send(route, acme.token, path(route), first, key);
      const other = Array.isArray(first) ? [...first, first[0]] : { ...(first as object), subject: 'Another subject' };
      return send(route, acme.token, path(route), other, key);
    },
    413: (route, op) => {
      const example = requestExample(op);
      const padded = (email: unknown) => ({ ...(email as object), html: 'x'.repeat(BODY_LIMIT) });
      return send(route, acme.token, path(route), Array.isArray(example) ? [padded(example[0])] : padded(example));
    },
    422: (route, op) => {
      // A bad path parameter, a bad page, or a body missing what the route needs, whichever the route has.
      if (route.includes('{'))
        return send(
          route,
          acme.token,
          path(route, () => 'not-an-id'),
          requestExample(op),
        );
      if (route === 'get /stats') return send(route, acme.token, '/stats?granularity=week');
      if (route.startsWith('get ')) return send(route, acme.token, `${path(route)}?limit=0`);
      if (route === 'post /emails') return send(route, acme.token, path(route), { ...(requestExample(op) as object), to: 'nobody' });
      return send(route, acme.token, path(route), {});
    },
    429: async (route, op) => {
      // More than a second's worth at once, however the limiter spreads its window.
      const burst = Array.from({ length: 3 * api.config.RATE_LIMIT_DEFAULT }, () => send(route, limited.token, path(route), requestExample(op)));
      const answers = await Promise.all(burst);
      return answers.find((a) => a.status === 429) ?? answers[0]!;
    },
  };

  it('reproduces every documented 4xx example on its route', async () => {
    let reproduced = 0;
    for (const [route, op] of document.operations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        if (!/^4\d\d$/.test(status)) continue;
        const content = (response as Json).content;
        if (!content['application/json']) {
          // The unsubscribe pages answer people in HTML: a forged token is their 404.
          const page = await fetch(`${api.url}${path(route, () => 'forged')}`, { method: route.split(' ')[0]!.toUpperCase() });
          const type = page.headers.get('content-type');
          expect({ route, status: String(page.status), type }).toEqual({ route, status, type: 'text/html; charset=utf-8' });
          expect(Object.keys(content)).toEqual(['text/html']);
          reproduced++;
          continue;
        }
        const example = content['application/json'].example;
        expect({ route, status, provoked: status in provoke }).toEqual({ route, status, provoked: true });
        const answer = await provoke[status]!(route, op);
        expect({ route, status: String(answer.status), body: answer.body }).toEqual({ route, status, body: example });
        reproduced++;
      }
    }
    expect(reproduced).toBeGreaterThan(150);
  });
});
