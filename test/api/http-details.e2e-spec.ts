import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { MAX_PATH_PARAM_LENGTH } from '@herald/http';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';

/*
 * What every response of the API owes a client at the HTTP level, beside its body: the status
 * Herald's error map and OpenAPI promise, Herald's `{statusCode, name, message}` even where the
 * router or Node's parser answer, `Allow` on a 405, `nosniff`, and `no-store` (Stripe's headers).
 */

const BODY_LIMIT = 4096;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Bytes on a socket, for what fetch will not send (an unknown method, a 20 KB URL). */
function raw(url: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as unknown });
    });
  });
}

describe('HTTP details', () => {
  let api: TestApi;
  let acme: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ API_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
    acme = await api.team();
  });
  afterAll(() => api.close());

  it(`answers a body over API_BODY_LIMIT_BYTES with 413, as the error map and OpenAPI say`, async () => {
    const body = { from: acme.from(), to: 'jane@example.com', subject: 'Big', html: 'x'.repeat(BODY_LIMIT) };
    expect(await call(api.url, acme.token, 'POST', '/emails', body)).toMatchObject({
      status: 413,
      body: { statusCode: 413, name: 'validation_error', message: `The request body must not be larger than ${BODY_LIMIT} bytes.` },
    });
  });

  it.each([
    ['PUT', '/emails', 'GET, HEAD, POST'],
    ['DELETE', '/suppressions/batch/add', 'POST'],
    ['POST', `/emails/${randomUUID()}`, 'GET, HEAD, PATCH'],
    ['OPTIONS', '/webhooks', 'GET, HEAD, POST'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const response = await call(api.url, acme.token, method, path);
    expect(response).toMatchObject({ status: 405, body: { statusCode: 405, name: 'method_not_allowed' } });
    expect(response.headers.get('allow')).toBe(allow);
  });

  it('answers an over-long id with 414 in Herald’s error body', async () => {
    const response = await call(api.url, acme.token, 'GET', `/emails/${'a'.repeat(MAX_PATH_PARAM_LENGTH + 1)}`);
    expect(response).toMatchObject({
      status: 414,
      body: { statusCode: 414, name: 'validation_error', message: expect.stringContaining(`at most ${MAX_PATH_PARAM_LENGTH} characters`) },
    });
    expect(Object.keys(response.body).sort()).toEqual(['message', 'name', 'statusCode']);
  });

  it('looks up a suppressed address longer than 100 characters (Fastify’s default limit) instead of answering 414', async () => {
    const address = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.example.com`;
    const added = await call(api.url, acme.token, 'POST', '/suppressions', { email: address });
    expect(added).toMatchObject({ status: 200, body: { email: address } });
    expect(await call(api.url, acme.token, 'GET', `/suppressions/${encodeURIComponent(address)}`)).toMatchObject({
      status: 200,
      body: { id: added.body.id, email: address },
    });
  });

  it('answers a URL longer than the header limit with 414, and one with too large headers with 431, in Herald’s body', async () => {
    const longUrl = await raw(api.url, `GET /emails?after=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(longUrl).toMatchObject({ status: 414, body: { statusCode: 414, name: 'validation_error', message: expect.stringContaining('URL') } });
    const bigHeaders = await raw(api.url, `GET /emails HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(bigHeaders).toMatchObject({ status: 431, body: { statusCode: 431, name: 'validation_error' } });
  });

  it('answers a method Node does not know with 501 in Herald’s body, and a bad URL encoding with 400', async () => {
    const unknown = await raw(api.url, `BREW /emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acme.token}\r\n\r\n`);
    expect(unknown).toMatchObject({
      status: 501,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff' },
      body: { statusCode: 501, name: 'method_not_allowed', message: 'Method `BREW` is not supported by this API.' },
    });
    expect(await call(api.url, acme.token, 'GET', '/emails/%E0%A4%A')).toMatchObject({
      status: 400,
      body: { statusCode: 400, name: 'validation_error', message: 'The URL path is not valid percent-encoding.' },
    });
  });

  it('sends X-Content-Type-Options: nosniff and Cache-Control: no-store with every response, errors and probes included', async () => {
    const answers = await Promise.all([
      call(api.url, acme.token, 'GET', '/emails'),
      call(api.url, null, 'GET', '/emails'),
      call(api.url, acme.token, 'GET', '/no-such-endpoint'),
      call(api.url, acme.token, 'POST', '/emails', {}),
      call(api.url, acme.token, 'GET', `/emails/${'a'.repeat(MAX_PATH_PARAM_LENGTH + 1)}`),
      call(api.url, null, 'GET', '/health/ready'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 422, 414, 200]);
    for (const { headers } of answers) {
      expect({ nosniff: headers.get('x-content-type-options'), cache: headers.get('cache-control') }).toEqual({
        nosniff: 'nosniff',
        cache: 'no-store',
      });
    }
  });

  it('sends Cache-Control: no-store with every response that carries a secret', async () => {
    const key = await call(api.url, acme.token, 'POST', '/api-keys', { name: 'ci' });
    const webhook = await call(api.url, acme.token, 'POST', '/webhooks', { endpoint: 'https://example.com/hooks', events: ['email.sent'] });
    const id = webhook.body.id as string;
    const fetched = await call(api.url, acme.token, 'GET', `/webhooks/${id}`);
    const rotated = await call(api.url, acme.token, 'POST', `/webhooks/${id}/signing-secret/rotate`);
    const secrets = [
      ['POST /api-keys', key, key.body.token],
      ['POST /webhooks', webhook, webhook.body.signing_secret],
      ['GET /webhooks/:id', fetched, fetched.body.signing_secret],
      ['POST /webhooks/:id/signing-secret/rotate', rotated, rotated.body.signing_secret],
    ] as const;
    for (const [route, answer, secret] of secrets) {
      expect({ route, status: answer.status, secret: typeof secret, cache: answer.headers.get('cache-control') }).toEqual({
        route,
        status: 200,
        secret: 'string',
        cache: 'no-store',
      });
    }
  });
});
