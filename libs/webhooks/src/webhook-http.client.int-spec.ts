import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { addressAllowList } from './endpoint-address';
import { EndpointConnections, postWebhook, ResolveAll } from './webhook-http.client';

/** postWebhook against a real local HTTP server. */
describe('postWebhook', () => {
  let server: Server;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  let lookups: string[];
  let port: number;

  /** A resolver that answers every name with loopback, as a rebinding DNS server would once. */
  const resolver: ResolveAll = async (host) => {
    lookups.push(host);
    return [{ address: '127.0.0.1', family: 4 }];
  };
  const post = (path: string, timeoutMs = 2000, allowLoopback = true) =>
    postWebhook(
      {
        endpoint: `http://hooks.rebind.test:${port}${path}`,
        headers: { 'webhook-id': 'msg_x' },
        body: '{"a":1}',
        timeoutMs,
        allowHttp: true,
        allowed: addressAllowList(allowLoopback ? ['127.0.0.0/8', '::1'] : []),
      },
      resolver,
    );

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => {
    lookups = [];
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('resolves the host once and connects to the checked address, keeping the Host header', async () => {
    let seen: { host?: string; id?: string; body?: string } = {};
    handler = (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = { host: req.headers.host, id: req.headers['webhook-id'] as string, body };
        res.writeHead(204).end();
      });
    };
    const result = await post('/ok');
    expect(result).toMatchObject({ kind: 'response', statusCode: 204 });
    expect(lookups).toEqual(['hooks.rebind.test']);
    expect(seen).toEqual({ host: `hooks.rebind.test:${port}`, id: 'msg_x', body: '{"a":1}' });
  });

  it('refuses loopback when it is not allowed, without connecting', async () => {
    handler = () => {
      throw new Error('must not connect');
    };
    const result = await post('/no', 2000, false);
    expect(result).toMatchObject({ kind: 'refused', error: 'refused: hooks.rebind.test resolves to loopback address 127.0.0.1' });
  });

  it('does not follow redirects, keeps 1 KB of the response and passes Retry-After on', async () => {
    handler = (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/', 'retry-after': '30' }).end('x'.repeat(5000));
    const result = await post('/redirect');
    expect(result).toMatchObject({ kind: 'response', statusCode: 302, retryAfter: '30' });
    expect(result.kind === 'response' && result.excerpt.length).toBe(1024);
  });

  it('gives up on an endpoint that does not answer in time', async () => {
    handler = () => undefined;
    const result = await post('/hang', 200);
    expect(result).toMatchObject({ kind: 'error', error: 'timed out after 200 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
  });

  it('reports a refused connection as an error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await postWebhook(
      {
        endpoint: `http://dead.test:${deadPort}/`,
        headers: {},
        body: '{}',
        timeoutMs: 1000,
        allowHttp: true,
        allowed: addressAllowList(['127.0.0.0/8']),
      },
      resolver,
    );
    expect(result).toMatchObject({ kind: 'error', error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('with a connection pool, reuses the checked address for a while and keeps connections alive per address', async () => {
    handler = (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    };
    const sockets = new Set<unknown>();
    const count = (socket: unknown) => sockets.add(socket);
    server.on('connection', count);
    const connections = new EndpointConnections({ recheckMs: 60_000, maxSocketsPerAddress: 4, maxFreeSocketsPerAddress: 4, idleTimeoutMs: 2_000 });
    const allowed = addressAllowList(['127.0.0.0/8']);
    const other: ResolveAll = async (host) => {
      lookups.push(host);
      return [{ address: '127.0.0.2', family: 4 }];
    };
    try {
      const send = (resolve: ResolveAll) =>
        postWebhook(
          { endpoint: `http://hooks.rebind.test:${port}/pooled`, headers: {}, body: '{}', timeoutMs: 2000, allowHttp: true, allowed, connections },
          resolve,
        );
      for (let i = 0; i < 5; i++) expect(await send(resolver)).toMatchObject({ kind: 'response', statusCode: 200 });
      expect(lookups).toEqual(['hooks.rebind.test']);
      expect(sockets.size).toBe(1);
      // Another resolver's check (another address: 127.0.0.2, where nothing listens) never rides
      // the connections of 127.0.0.1: it is refused instead of answered over the pooled socket.
      expect(await send(other)).toMatchObject({ kind: 'error', error: expect.stringMatching(/ECONNREFUSED/) });
      expect(sockets.size).toBe(1);
    } finally {
      server.off('connection', count);
      connections.close();
    }
  });
});
