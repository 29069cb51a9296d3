import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { loadConfig } from '@herald/config';
import { addressAllowList } from '@herald/core';
import { type AttachmentLookup, fetchAttachment, MAX_ATTACHMENT_REDIRECTS } from './attachment-fetcher';
import { MessageBuildError } from './message-build-error';

const LOOPBACK = addressAllowList(['127.0.0.0/8', '::1']);
const NONE = addressAllowList([]);

/** A resolver for made-up names; anything else is NXDOMAIN. Records the names asked. */
function fakeDns(records: Record<string, string[]>): AttachmentLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    const addresses = records[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

const failure = (promise: Promise<unknown>): Promise<MessageBuildError> =>
  promise.then(
    () => {
      throw new Error('expected the fetch to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(MessageBuildError);
      return error as MessageBuildError;
    },
  );

describe('fetchAttachment (SSRF guard)', () => {
  let http: Server;
  let port: number;
  let seen: { url: string | undefined; headers: IncomingHttpHeaders }[];

  beforeAll(async () => {
    http = createServer((request, response) => {
      seen.push({ url: request.url, headers: request.headers });
      const url = new URL(request.url ?? '/', 'http://x');
      const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
      if (url.pathname === '/file.txt') {
        response.writeHead(200, { 'content-type': 'text/plain' }).end('hello attachment');
      } else if (hop) {
        // /hop/N redirects N more times, then serves the file.
        const left = Number(hop[1]);
        response.writeHead(302, { location: left > 1 ? `/hop/${left - 1}` : '/file.txt' }).end();
      } else if (url.pathname === '/redirect') {
        response.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '' }).end();
      } else if (url.pathname === '/gzip') {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('zipped text'));
      } else if (url.pathname === '/chunked') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.write(Buffer.alloc(600));
        response.end(Buffer.alloc(600));
      } else if (url.pathname === '/big') {
        response.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000));
      } else if (url.pathname === '/slow') {
        setTimeout(() => response.writeHead(200).end('late'), 2000).unref();
      } else if (url.pathname === '/broken') {
        response.writeHead(503).end();
      } else if (url.pathname === '/busy') {
        response.writeHead(429).end();
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    port = (http.address() as AddressInfo).port;
  });

  beforeEach(() => {
    seen = [];
  });

  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  const fetchWith = (path: string, options: { allowed?: typeof LOOPBACK; lookup?: AttachmentLookup; maxBytes?: number; timeoutMs?: number } = {}) =>
    fetchAttachment(path, {
      timeoutMs: options.timeoutMs ?? 5000,
      maxBytes: options.maxBytes ?? 1024 * 1024,
      allowed: options.allowed,
      lookup: options.lookup,
    });

  describe('hosts resolving to private addresses', () => {
    it('refuses a hostname that resolves to loopback when nothing is allowlisted, permanently and without connecting', async () => {
      const dns = fakeDns({ 'files.example.test': ['127.0.0.1'] });
      const error = await failure(fetchWith(`http://files.example.test:${port}/file.txt`, { lookup: dns, allowed: NONE }));
      expect(error.permanent).toBe(true);
      expect(error.message).toBe(
        `Attachment http://files.example.test:${port}/file.txt points at a loopback address (127.0.0.1); Herald does not fetch from private networks.`,
      );
      expect(seen).toEqual([]);
    });

    it('refuses `localhost` through the system resolver', async () => {
      const error = await failure(fetchWith(`http://localhost:${port}/file.txt`));
      expect(error.permanent).toBe(true);
      expect(error.message).toMatch(/points at a loopback address \((127\.0\.0\.1|::1)\); Herald does not fetch from private networks\.$/);
      expect(seen).toEqual([]);
    });

    it('fetches from an allowlisted address, resolving once, keeping the Host header', async () => {
      const dns = fakeDns({ 'files.example.test': ['127.0.0.1'] });
      const fetched = await fetchWith(`http://files.example.test:${port}/file.txt`, { lookup: dns, allowed: LOOPBACK });
      expect(fetched).toEqual({ content: Buffer.from('hello attachment'), contentType: 'text/plain' });
      expect(dns.asked).toEqual(['files.example.test']);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.headers.host).toBe(`files.example.test:${port}`);
    });

    it('refuses a name with a public and a private record, naming the private one', async () => {
      const dns = fakeDns({ 'mixed.example.test': ['93.184.216.34', '10.0.0.5'] });
      const error = await failure(fetchWith('https://mixed.example.test/a.pdf', { lookup: dns, allowed: LOOPBACK }));
      expect(error).toMatchObject({ permanent: true });
      expect(error.message).toBe(
        'Attachment https://mixed.example.test/a.pdf points at a private address (10.0.0.5); Herald does not fetch from private networks.',
      );
    });

    it('connects to the address it checked, not to whatever a second DNS answer says (rebinding)', async () => {
      let calls = 0;
      const rebinding: AttachmentLookup = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.5', family: 4 }];
      const allowOnly127 = addressAllowList(['127.0.0.1']);
      const fetched = await fetchWith(`http://rebind.example.test:${port}/file.txt`, { lookup: rebinding, allowed: allowOnly127 });
      expect(fetched.content.toString()).toBe('hello attachment');
      expect(calls).toBe(1);
    });

    it('resolution failures stay transient', async () => {
      const error = await failure(fetchWith('http://nowhere.example.test/a.pdf', { lookup: fakeDns({}) }));
      expect(error.permanent).toBe(false);
      expect(error.message).toMatch(/ENOTFOUND nowhere\.example\.test/);
    });
  });

  describe('IP-literal URLs', () => {
    it.each([
      ['http://169.254.169.254/latest/meta-data/', 'private', '169.254.169.254'],
      ['http://[::ffff:127.0.0.1]/x', 'loopback', '::ffff:7f00:1'],
      ['http://[::ffff:169.254.169.254]/x', 'private', '::ffff:a9fe:a9fe'],
      ['http://127.0.0.1/x', 'loopback', '127.0.0.1'],
      ['http://2130706433/x', 'loopback', '127.0.0.1'],
      ['http://0x7f.1/x', 'loopback', '127.0.0.1'],
      ['http://[::1]/x', 'loopback', '::1'],
      ['http://0.0.0.0/x', 'private', '0.0.0.0'],
      ['http://10.0.0.5/x', 'private', '10.0.0.5'],
      ['http://[fd00:ec2::254]/x', 'private', 'fd00:ec2::254'],
    ])('refuses %s without resolving it', async (url, kind, address) => {
      const dns = fakeDns({});
      const error = await failure(fetchWith(url, { lookup: dns }));
      expect(error.permanent).toBe(true);
      expect(error.message).toContain(`points at a ${kind} address (${address}); Herald does not fetch from private networks.`);
      expect(dns.asked).toEqual([]);
    });

    it('refuses metadata even when loopback is allowlisted, and fetches an allowlisted literal', async () => {
      expect(await failure(fetchWith('http://169.254.169.254/latest/meta-data/', { allowed: LOOPBACK }))).toMatchObject({ permanent: true });
      expect(await failure(fetchWith('http://[::ffff:10.0.0.1]/', { allowed: LOOPBACK }))).toMatchObject({ permanent: true });
      expect((await fetchWith(`http://127.0.0.1:${port}/file.txt`, { allowed: LOOPBACK })).content.toString()).toBe('hello attachment');
    });
  });

  describe('redirects', () => {
    const cdn = () => fakeDns({ 'cdn.example.test': ['127.0.0.1'], 'internal.example.test': ['10.0.0.5'] });
    const allow127 = addressAllowList(['127.0.0.1']);

    it(`follows up to ${MAX_ATTACHMENT_REDIRECTS} redirects, relative ones included`, async () => {
      const fetched = await fetchWith(`http://cdn.example.test:${port}/hop/${MAX_ATTACHMENT_REDIRECTS}`, { lookup: cdn(), allowed: allow127 });
      expect(fetched.content.toString()).toBe('hello attachment');
      expect(seen.map((s) => s.url)).toEqual(['/hop/3', '/hop/2', '/hop/1', '/file.txt']);
    });

    it('gives up, permanently, after more redirects than that', async () => {
      const error = await failure(
        fetchWith(`http://cdn.example.test:${port}/hop/${MAX_ATTACHMENT_REDIRECTS + 1}`, { lookup: cdn(), allowed: allow127 }),
      );
      expect(error.permanent).toBe(true);
      expect(error.message).toBe(`Attachment http://cdn.example.test:${port}/hop/4 could not be fetched: more than 3 redirects.`);
      expect(seen).toHaveLength(MAX_ATTACHMENT_REDIRECTS + 1);
    });

    it('refuses a chain that ends at a hostname resolving to a private address', async () => {
      const dns = cdn();
      const last = encodeURIComponent(`/redirect?status=307&to=${encodeURIComponent('http://internal.example.test/secret')}`);
      const error = await failure(fetchWith(`http://cdn.example.test:${port}/redirect?status=301&to=${last}`, { lookup: dns, allowed: allow127 }));
      expect(error.permanent).toBe(true);
      expect(error.message).toBe(
        `Attachment http://cdn.example.test:${port}/redirect?status=301&to=${last} redirects to http://internal.example.test/secret, which points at a private address (10.0.0.5); Herald does not fetch from private networks.`,
      );
      expect(dns.asked).toEqual(['cdn.example.test', 'cdn.example.test', 'internal.example.test']);
      expect(seen).toHaveLength(2);
    });

    it('refuses redirects to metadata and loopback literals, and to other schemes', async () => {
      const to = (target: string, status = 302) =>
        failure(
          fetchWith(`http://cdn.example.test:${port}/redirect?status=${status}&to=${encodeURIComponent(target)}`, {
            lookup: cdn(),
            allowed: allow127,
          }),
        );
      expect((await to('http://169.254.169.254/latest/meta-data/iam/', 303)).message).toContain('points at a private address (169.254.169.254)');
      expect((await to('http://[::1]:8080/admin', 308)).message).toContain('points at a loopback address (::1)');
      expect((await to('http://127.0.0.2/')).message).toContain('points at a loopback address (127.0.0.2)');
      expect(await to('file:///etc/passwd')).toMatchObject({ permanent: true, message: expect.stringContaining('not an http(s) URL') });
    });
  });

  describe('https', () => {
    let tls: TlsServer;
    let servername: string | undefined;

    beforeAll(async () => {
      // No certificate: the handshake fails once the client has sent its SNI, which is all this checks.
      tls = createTlsServer({
        SNICallback: (name, callback) => {
          servername = name;
          callback(new Error('no certificate here'));
        },
      });
      tls.on('tlsClientError', () => undefined);
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    });

    afterAll(async () => {
      await new Promise((resolve) => tls.close(resolve));
    });

    it('connects to the checked address with the URL hostname as SNI', async () => {
      const tlsPort = (tls.address() as AddressInfo).port;
      const dns = fakeDns({ 'secure.example.test': ['127.0.0.1'] });
      const error = await failure(fetchWith(`https://secure.example.test:${tlsPort}/a.pdf`, { lookup: dns, allowed: LOOPBACK }));
      expect(servername).toBe('secure.example.test');
      expect(error.permanent).toBe(false);
    });
  });

  describe('statuses, deadline and size cap (unchanged)', () => {
    const local = (path: string) => `http://127.0.0.1:${port}${path}`;

    it('404 is permanent; 503 and 429 are transient; refused connections are transient', async () => {
      expect(await failure(fetchWith(local('/missing'), { allowed: LOOPBACK }))).toMatchObject({
        permanent: true,
        message: expect.stringContaining('HTTP 404'),
      });
      expect(await failure(fetchWith(local('/broken'), { allowed: LOOPBACK }))).toMatchObject({
        permanent: false,
        message: expect.stringContaining('HTTP 503'),
      });
      expect(await failure(fetchWith(local('/busy'), { allowed: LOOPBACK }))).toMatchObject({ permanent: false });
      expect(await failure(fetchWith('http://127.0.0.1:1/x', { allowed: LOOPBACK }))).toMatchObject({ permanent: false });
    });

    it('times out transiently', async () => {
      const error = await failure(fetchWith(local('/slow'), { allowed: LOOPBACK, timeoutMs: 200 }));
      expect(error).toMatchObject({ permanent: false, message: expect.stringContaining('no complete answer within 200 ms') });
    });

    it('refuses bodies over the cap, announced or not, permanently', async () => {
      expect(await failure(fetchWith(local('/big'), { allowed: LOOPBACK, maxBytes: 1000 }))).toMatchObject({
        permanent: true,
        message: expect.stringContaining('larger than the 1000 bytes'),
      });
      expect(await failure(fetchWith(local('/chunked'), { allowed: LOOPBACK, maxBytes: 1000 }))).toMatchObject({ permanent: true });
      expect((await fetchWith(local('/chunked'), { allowed: LOOPBACK, maxBytes: 1200 })).content).toHaveLength(1200);
    });

    it('decodes compressed bodies like fetch did', async () => {
      expect(await fetchWith(local('/gzip'), { allowed: LOOPBACK })).toEqual({ content: Buffer.from('zipped text'), contentType: 'text/plain' });
    });

    it('refuses non-http(s) and credential-bearing URLs permanently', async () => {
      for (const path of ['file:///etc/passwd', 'ftp://files.example.test/a', 'not a url', `http://user:secret@127.0.0.1:${port}/file.txt`]) {
        const error = await failure(fetchWith(path, { allowed: LOOPBACK }));
        expect({ path, permanent: error.permanent }).toEqual({ path, permanent: true });
        expect(error.message).not.toContain('secret');
      }
    });
  });

  it('ATTACHMENT_ALLOWED_ADDRESSES defaults to nothing and parses an IP/CIDR list', () => {
    expect(loadConfig({}).ATTACHMENT_ALLOWED_ADDRESSES).toEqual([]);
    expect(loadConfig({ ATTACHMENT_ALLOWED_ADDRESSES: '127.0.0.0/8, ::1' }).ATTACHMENT_ALLOWED_ADDRESSES).toEqual(['127.0.0.0/8', '::1']);
    expect(() => loadConfig({ ATTACHMENT_ALLOWED_ADDRESSES: 'localhost' })).toThrow(/ATTACHMENT_ALLOWED_ADDRESSES/);
  });
});
