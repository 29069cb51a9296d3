import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import { addressAllowList } from '@herald/core';
import { freeSharedPort, TestDnsServer } from '@herald/testing';
import { postWebhook, validateCreateWebhook, type HttpAttemptRequest } from '@herald/webhooks';
import { fetchAttachment } from '../../libs/delivery/src/message/attachment-fetcher';
import { MessageBuildError } from '../../libs/delivery/src/message/message-build-error';

/** The outside web server both clients may reach (allowlisted, standing in for a public address). */
const PUBLIC = '127.0.0.1';
/** A server inside Herald's network that nothing a customer names may reach. */
const INTERNAL = '127.0.0.2';
const ONLY_PUBLIC = addressAllowList([PUBLIC]);

/**
 * Answers every name from the TEST DNS SERVER (a real DNS round trip over UDP, A and AAAA), as
 * node:dns lookup would with that server in resolv.conf: how the attachment fetcher and the
 * webhook client resolve, with the resolver swapped.
 */
function lookupVia(dns: TestDnsServer) {
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([dns.address()]);
  return async (host: string): Promise<LookupAddress[]> => {
    const [v4, v6] = await Promise.all([resolver.resolve4(host).catch(() => []), resolver.resolve6(host).catch(() => [])]);
    const all = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
    if (all.length === 0) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return all;
  };
}

/** Addresses a customer's name may resolve to that Herald must never connect to, by family. */
const REFUSED: [type: 'A' | 'AAAA', address: string, what: string][] = [
  ['A', INTERNAL, 'loopback'],
  ['A', '10.1.2.3', 'private (RFC 1918)'],
  ['A', '172.16.0.1', 'private (RFC 1918)'],
  ['A', '192.168.1.1', 'private (RFC 1918)'],
  ['A', '169.254.169.254', 'cloud metadata (link-local)'],
  ['A', '100.100.100.200', 'Alibaba metadata (CGNAT)'],
  ['A', '0.0.0.0', 'this host'],
  ['A', '192.0.0.192', 'IETF protocol assignments'],
  ['A', '198.18.0.1', 'benchmarking'],
  ['A', '224.0.0.1', 'multicast'],
  ['A', '255.255.255.255', 'broadcast'],
  ['AAAA', '::1', 'loopback'],
  ['AAAA', 'fe80::1', 'link-local'],
  ['AAAA', 'fd00:ec2::254', 'AWS metadata (unique local)'],
  ['AAAA', '::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['AAAA', '64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
  ['AAAA', '2002:7f00:1::1', '6to4 of loopback'],
  ['AAAA', 'ff02::1', 'multicast'],
];

/**
 * SSRF (issue 17, security) through the two places Herald fetches a URL a customer gave it:
 * attachment `path` (the worker downloads it) and webhook endpoints (the webhooks role POSTs to
 * them), with names served by the project's test DNS server. Every private, loopback,
 * link-local, metadata and otherwise internal answer is refused before any connection; a name
 * whose answer changes between Herald's check and its connection (DNS rebinding) is connected to
 * at the address checked, once resolved; a redirect does not lead inside; and a name that was
 * public when the endpoint was accepted and turns private later is refused at delivery time.
 */
describe('SSRF through attachment paths and webhook endpoints, names from the test DNS server', () => {
  let dns: TestDnsServer;
  let port: number;
  let outside: Server;
  let inside: Server;
  const hits = { outside: [] as string[], inside: [] as string[] };
  let lookup: ReturnType<typeof lookupVia>;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    lookup = lookupVia(dns);
    port = await freeSharedPort([PUBLIC, INTERNAL]);
    outside = createServer((request, response) => {
      hits.outside.push(`${request.method} ${request.headers.host}${request.url}`);
      const redirect = /^\/redirect\?to=(.*)$/.exec(request.url ?? '');
      if (redirect) return void response.writeHead(302, { location: decodeURIComponent(redirect[1]!) }).end();
      response.writeHead(200, { 'content-type': 'text/plain' }).end('public file');
    });
    inside = createServer((request, response) => {
      hits.inside.push(`${request.method} ${request.headers.host}${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
    });
    await new Promise<void>((resolve) => outside.listen(port, PUBLIC, resolve));
    await new Promise<void>((resolve) => inside.listen(port, INTERNAL, resolve));
  });
  afterAll(async () => {
    await dns.close();
    await Promise.all([outside, inside].map((s) => new Promise((resolve) => s.close(resolve))));
  });
  beforeEach(() => {
    hits.outside.length = 0;
    hits.inside.length = 0;
    dns.clear();
  });

  const fetchFrom = (url: string) => fetchAttachment(url, { timeoutMs: 3000, maxBytes: 1_000_000, allowed: ONLY_PUBLIC, lookup });
  const refusal = (url: string): Promise<MessageBuildError> =>
    fetchFrom(url).then(
      () => {
        throw new Error(`fetched ${url}`);
      },
      (error: unknown) => {
        if (!(error instanceof MessageBuildError)) throw error;
        return error;
      },
    );
  const post = (endpoint: string) => {
    const request: HttpAttemptRequest = {
      endpoint,
      headers: {},
      body: '{"type":"email.sent"}',
      timeoutMs: 3000,
      allowHttp: true,
      allowed: ONLY_PUBLIC,
    };
    return postWebhook(request, lookup);
  };

  it.each(REFUSED)('refuses a name whose %s record is %s (%s), in both clients, without connecting', async (type, address) => {
    const name = `${type.toLowerCase()}-${address.replace(/[^0-9a-f]/gi, '-')}.evil.test`;
    dns.set(name, type, [address]);
    const attachment = await refusal(`http://${name}:${port}/file.txt`);
    expect(attachment.permanent).toBe(true);
    expect(attachment.message).toMatch(
      new RegExp(`points at a (private|loopback) address \\(.+\\); Herald does not fetch from private networks\\.$`),
    );
    const webhook = await post(`http://${name}:${port}/hook`);
    expect(webhook).toMatchObject({
      kind: 'refused',
      error: expect.stringMatching(new RegExp(`^refused: ${name.replace(/\./g, '\\.')} resolves to (private|loopback) address`)),
    });
    expect(hits.inside).toEqual([]);
    expect(dns.queries.filter((q) => q.startsWith(name))).toEqual(expect.arrayContaining([`${name} ${type}`]));
  });

  it('refuses a name with a public and a private record, whichever comes first', async () => {
    dns.set('mixed.evil.test', 'A', [PUBLIC]).set('mixed.evil.test', 'AAAA', ['::1']);
    expect((await refusal(`http://mixed.evil.test:${port}/file.txt`)).message).toContain('(::1)');
    expect(await post(`http://mixed.evil.test:${port}/hook`)).toMatchObject({ kind: 'refused' });
    expect(hits).toEqual({ outside: [], inside: [] });
  });

  it('DNS rebinding: once checked, the connection goes to the checked address, however the name answers afterwards', async () => {
    // The attacker's server answers public to the first question and private to every later one (TTL 0).
    const rebinding = (name: string) => {
      dns.set(name, 'A', [PUBLIC]);
      return async (host: string) => {
        const answer = await lookup(host);
        dns.set(name, 'A', [INTERNAL]);
        return answer;
      };
    };
    const fetched = await fetchAttachment(`http://rebind-a.evil.test:${port}/file.txt`, {
      timeoutMs: 3000,
      maxBytes: 1_000_000,
      allowed: ONLY_PUBLIC,
      lookup: rebinding('rebind-a.evil.test'),
    });
    expect(fetched.content.toString()).toBe('public file');
    const posted = await postWebhook(
      { endpoint: `http://rebind-w.evil.test:${port}/hook`, headers: {}, body: '{}', timeoutMs: 3000, allowHttp: true, allowed: ONLY_PUBLIC },
      rebinding('rebind-w.evil.test'),
    );
    expect(posted).toMatchObject({ kind: 'response', statusCode: 200 });
    // One question per name and family: nothing asked the server again before connecting.
    expect(dns.queries.sort()).toEqual(['rebind-a.evil.test A', 'rebind-a.evil.test AAAA', 'rebind-w.evil.test A', 'rebind-w.evil.test AAAA']);
    expect(hits.outside).toEqual([`GET rebind-a.evil.test:${port}/file.txt`, `POST rebind-w.evil.test:${port}/hook`]);
    expect(hits.inside).toEqual([]);

    // The next fetch and the next delivery resolve afresh, and now the name is private: refused.
    expect((await refusal(`http://rebind-a.evil.test:${port}/file.txt`)).message).toContain(`(${INTERNAL})`);
    expect(await post(`http://rebind-w.evil.test:${port}/hook`)).toMatchObject({ kind: 'refused' });
    expect(hits.inside).toEqual([]);
  });

  it('accepts a webhook endpoint by name (it is not resolved then) and refuses it at delivery once the name turns private', async () => {
    const endpoint = `http://hooks.evil.test:${port}/hook`;
    expect(validateCreateWebhook({ endpoint, events: ['email.sent'] }, { allowHttp: true, allowed: ONLY_PUBLIC })).toMatchObject({ endpoint });
    dns.set('hooks.evil.test', 'A', [PUBLIC]);
    expect(await post(endpoint)).toMatchObject({ kind: 'response', statusCode: 200 });
    dns.set('hooks.evil.test', 'A', ['169.254.169.254']);
    expect(await post(endpoint)).toMatchObject({ kind: 'refused', error: 'refused: hooks.evil.test resolves to private address 169.254.169.254' });
    expect(hits.outside).toHaveLength(1);
  });

  it('does not follow a redirect inside: attachments check each hop, webhooks do not follow at all', async () => {
    dns.set('files.evil.test', 'A', [PUBLIC]).set('internal.evil.test', 'A', [INTERNAL]);
    const via = (to: string) => `http://files.evil.test:${port}/redirect?to=${encodeURIComponent(to)}`;
    for (const target of [
      `http://internal.evil.test:${port}/secret`,
      `http://${INTERNAL}:${port}/secret`,
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${port}/`,
    ]) {
      const error = await refusal(via(target));
      expect({ target, permanent: error.permanent, message: error.message }).toEqual({
        target,
        permanent: true,
        message: expect.stringMatching(/redirects to .*, which points at a (private|loopback) address/),
      });
    }
    const webhook = await post(via(`http://${INTERNAL}:${port}/secret`));
    expect(webhook).toMatchObject({ kind: 'response', statusCode: 302 });
    expect(hits.inside).toEqual([]);
    expect(hits.outside).toHaveLength(5);
  });
});
