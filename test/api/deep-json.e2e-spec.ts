import { randomUUID } from 'node:crypto';
import { MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from '@herald/http';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { ApiProcess, envOf, herald, startApiProcess } from '../support/herald-process';

/**
 * A body nested 100,000 deep around a NUL used to end the whole process (stack overflow in the
 * NUL check) or answer 500 (the recursive request hash). Every route that takes a JSON body is
 * sent one, read from the API's own OpenAPI document so that a new endpoint is covered without
 * editing this suite, against a real `herald api` process that must answer 422 and keep serving.
 */

const DEPTH = 100_000;
const NESTINGS: [string, string][] = [
  ['arrays', `${'['.repeat(DEPTH)}"\\u0000"${']'.repeat(DEPTH)}`],
  ['objects', `${'{"a":'.repeat(DEPTH)}"\\u0000"${'}'.repeat(DEPTH)}`],
];
const BODY_METHODS = ['post', 'patch', 'put'];
const REFUSAL = {
  statusCode: 422,
  name: 'validation_error',
  message: `The request body must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
};

describe('JSON bodies built to exhaust the process: nested deep, or millions of objects wide', () => {
  let isolated: IsolatedConfig;
  let api: ApiProcess;
  let token: string;
  let sendingToken: string;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    const env = envOf(isolated.config);
    const team = await herald(env, 'team', 'create', '--name', 'deep', '--plan', 'pro-50k', '--rate-limit', '1000');
    token = (await herald(env, 'key', 'create', '--team', team.id)).token;
    sendingToken = (await herald(env, 'key', 'create', '--team', team.id, '--permission', 'sending_access')).token;
    api = await startApiProcess(env);
  });
  afterAll(async () => {
    await api?.stop();
    await isolated?.cleanup();
  });

  /** `post /emails/{id}/cancel` → ['POST', '/emails/<uuid>/cancel']: any id will do, the body is refused before the route runs. */
  async function jsonRoutes(): Promise<[string, string][]> {
    type Operation = { requestBody?: { content: Record<string, unknown> } };
    const document = (await (await fetch(`${api.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    // A route whose body is a form (the contacts import, the unsubscribe link) is not a JSON route.
    const takesJson = (op: Operation) => !op.requestBody || 'application/json' in op.requestBody.content;
    return Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => BODY_METHODS.includes(method) && takesJson(item[method]!))
        .map((method): [string, string] => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, () => randomUUID())]),
    );
  }

  const send = async (method: string, path: string, body: string, headers: Record<string, string> = {}, key = token) => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { route: `${method} ${path}`, status: response.status, body: (await response.json()) as unknown };
  };
  const listKeys = () => fetch(`${api.url}/api-keys`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

  it(`a body nested ${DEPTH} deep gets 422 naming the limit on every JSON route, with and without Idempotency-Key, and the process keeps answering`, async () => {
    const routes = await jsonRoutes();
    // The send, batch, update and create routes at least; more as the API grows.
    expect(routes.length).toBeGreaterThanOrEqual(17);
    expect(routes.map(([method]) => method)).toEqual(expect.arrayContaining(['POST', 'PATCH']));
    for (const [method, path] of routes) {
      for (const [, body] of NESTINGS) {
        for (const headers of [{}, { 'idempotency-key': randomUUID() }] as Record<string, string>[]) {
          expect(await send(method, path, body, headers)).toEqual({ route: `${method} ${path}`, status: 422, body: REFUSAL });
        }
      }
      expect({ after: `${method} ${path}`, status: await listKeys() }).toEqual({ after: `${method} ${path}`, status: 200 });
    }
    console.log(`${routes.length} JSON routes × ${NESTINGS.length} nestings × with and without Idempotency-Key: all 422`);
    expect(api.child.exitCode).toBeNull();
  });

  it('gets the same 422 with a sending_access key on POST /emails (the case that ended every role)', async () => {
    for (const [, body] of NESTINGS) {
      expect(await send('POST', '/emails', body, { 'idempotency-key': 'deep' }, sendingToken)).toMatchObject({ status: 422, body: REFUSAL });
    }
    expect(await listKeys()).toBe(200);
    expect(api.child.exitCode).toBeNull();
  });

  it('a body of millions of empty objects gets 422 naming the limit instead of a gigabyte of heap, and the process keeps answering', async () => {
    // 5 million objects, 15 MB: under the body limit, about 300 MB of heap once parsed.
    const body = `[${'{},'.repeat(5_000_000)}{}]`;
    const refusals = await Promise.all(
      ['/emails/batch', '/emails/batch', '/emails'].map(async (path) => {
        const response = await fetch(`${api.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body,
        });
        return { status: response.status, body: (await response.json()) as unknown };
      }),
    );
    for (const refusal of refusals) {
      expect(refusal).toEqual({
        status: 422,
        body: {
          statusCode: 422,
          name: 'validation_error',
          message: `The request body must not hold more than ${MAX_JSON_CONTAINERS} arrays and objects.`,
        },
      });
    }
    expect((await fetch(`${api.url}/api-keys`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(api.child.exitCode).toBeNull();
  });
});
