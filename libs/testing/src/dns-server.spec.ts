import { Resolver } from 'node:dns/promises';
import dns2 from 'dns2';
import { splitTxt, TestDnsServer } from './dns-server';

describe('TestDnsServer', () => {
  let server: TestDnsServer;
  const resolver = () => {
    const r = new Resolver({ timeout: 200, tries: 1 });
    r.setServers([server.address()]);
    return r;
  };
  const code = (promise: Promise<unknown>) =>
    promise.then(
      () => 'answered',
      (e: NodeJS.ErrnoException) => e.code,
    );

  beforeAll(async () => {
    server = await TestDnsServer.start();
  });
  afterAll(() => server.close());
  beforeEach(() => server.clear());

  it('listens on a random loopback port', () => {
    expect(server.address()).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('serves TXT records, splitting values over 255 bytes into character-strings', async () => {
    const long = `v=DKIM1; k=rsa; p=${'A'.repeat(392)}`;
    server.set('sel._domainkey.example.test', 'TXT', [long]).set('example.test', 'TXT', ['hello', ['pre', 'split']]);
    const [chunks] = await resolver().resolveTxt('sel._domainkey.example.test');
    expect(chunks.map((c) => c.length)).toEqual([255, long.length - 255]);
    expect(chunks.join('')).toBe(long);
    expect(await resolver().resolveTxt('example.test')).toEqual(expect.arrayContaining([['hello'], ['pre', 'split']]));
  });

  it('serves MX, A, AAAA and CNAME records, names case-insensitive', async () => {
    server
      .set('send.example.test', 'MX', [{ exchange: 'bounce.herald.test', priority: 10 }])
      .set('mx.example.test', 'A', ['192.0.2.1'])
      .set('mx.example.test', 'AAAA', ['2001:db8::1'])
      .set('links.example.test', 'CNAME', ['track.herald.test']);
    expect(await resolver().resolveMx('SEND.Example.test')).toEqual([{ exchange: 'bounce.herald.test', priority: 10 }]);
    expect(await resolver().resolve4('mx.example.test')).toEqual(['192.0.2.1']);
    expect(await resolver().resolve6('mx.example.test')).toEqual(['2001:db8::1']);
    expect(await resolver().resolveCname('links.example.test')).toEqual(['track.herald.test']);
  });

  it('follows a CNAME inside the zone for other types', async () => {
    server.set('alias.example.test', 'CNAME', ['target.example.test']).set('target.example.test', 'TXT', ['at the target']);
    expect(await resolver().resolveTxt('alias.example.test')).toEqual([['at the target']]);
  });

  it('answers NXDOMAIN for unknown names and NODATA for known names without the type', async () => {
    server.set('a.b.example.test', 'TXT', ['x']);
    expect(await code(resolver().resolveTxt('unknown.example.test'))).toBe('ENOTFOUND');
    expect(await code(resolver().resolveMx('a.b.example.test'))).toBe('ENODATA');
    // An empty non-terminal exists (RFC 8020): NODATA, not NXDOMAIN.
    expect(await code(resolver().resolveTxt('b.example.test'))).toBe('ENODATA');
  });

  it('removes one type or a whole name', async () => {
    server.set('x.example.test', 'TXT', ['t']).set('x.example.test', 'MX', [{ exchange: 'm.test', priority: 1 }]);
    server.remove('x.example.test', 'TXT');
    expect(await code(resolver().resolveTxt('x.example.test'))).toBe('ENODATA');
    server.remove('x.example.test');
    expect(await code(resolver().resolveMx('x.example.test'))).toBe('ENOTFOUND');
  });

  it('stalls a name (the resolver times out) and fails one with SERVFAIL', async () => {
    server.set('slow.example.test', 'TXT', ['t']).stall('slow.example.test').servfail('broken.example.test');
    expect(await code(resolver().resolveTxt('slow.example.test'))).toBe('ETIMEOUT');
    expect(await code(resolver().resolveTxt('broken.example.test'))).toBe('ESERVFAIL');
    server.set('slow.example.test', 'TXT', ['t']);
    expect(await resolver().resolveTxt('slow.example.test')).toEqual([['t']]);
  });

  it('answers over TCP too, where a resolver retries a truncated UDP answer', async () => {
    const many = Array.from({ length: 6 }, (_, i) => `${i}${'x'.repeat(200)}`);
    server.set('big.example.test', 'TXT', many);
    expect((await resolver().resolveTxt('big.example.test')).map((c) => c.join('')).sort()).toEqual(many);
    const [, port] = server.address().split(':');
    const tcp = dns2.TCPClient({ dns: '127.0.0.1', port: Number(port) });
    const response = await tcp('big.example.test', 'TXT');
    expect(response.answers).toHaveLength(6);
    expect(server.queries).toContain('big.example.test TXT');
  });

  it('splits by bytes, never inside a short value', () => {
    expect(splitTxt('short')).toEqual(['short']);
    expect(splitTxt('a'.repeat(600)).map((s) => s.length)).toEqual([255, 255, 90]);
  });
});
