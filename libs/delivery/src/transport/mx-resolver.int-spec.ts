import { TestDnsServer } from '@herald/testing';
import { MxResolver } from './mx-resolver';

describe('MxResolver', () => {
  let dns: TestDnsServer;
  const resolver = (cacheMs = 0) => new MxResolver({ servers: [dns.address()], timeoutMs: 300, cacheMs });

  beforeAll(async () => {
    dns = await TestDnsServer.start();
  });
  afterAll(() => dns.close());
  beforeEach(() => dns.clear());

  it('orders MX hosts by preference, with A then AAAA addresses from the same servers', async () => {
    dns
      .set('example.test', 'MX', [
        { exchange: 'mx2.example.test', priority: 20 },
        { exchange: 'mx1.example.test', priority: 10 },
      ])
      .set('mx1.example.test', 'A', ['127.0.0.2'])
      .set('mx1.example.test', 'AAAA', ['::1'])
      .set('mx2.example.test', 'A', ['127.0.0.3']);
    expect(await resolver().resolve('Example.test')).toEqual({
      kind: 'hosts',
      hosts: [
        { name: 'mx1.example.test', priority: 10, addresses: ['127.0.0.2', '::1'] },
        { name: 'mx2.example.test', priority: 20, addresses: ['127.0.0.3'] },
      ],
    });
  });

  it('shuffles hosts of equal preference', async () => {
    const names = ['a', 'b', 'c', 'd'].map((n) => `${n}.mx.test`);
    dns.set(
      'example.test',
      'MX',
      names.map((exchange) => ({ exchange, priority: 10 })),
    );
    for (const name of names) dns.set(name, 'A', ['127.0.0.2']);
    const r = resolver(60_000);
    const firsts = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const result = await r.resolve('example.test');
      if (result.kind === 'hosts') firsts.add(result.hosts[0].name);
    }
    expect(firsts.size).toBeGreaterThan(1);
  });

  it("falls back to the domain's own address when it has no MX (RFC 5321 §5.1)", async () => {
    dns.set('example.test', 'A', ['127.0.0.4']);
    expect(await resolver().resolve('example.test')).toEqual({
      kind: 'hosts',
      hosts: [{ name: 'example.test', priority: 0, addresses: ['127.0.0.4'] }],
    });
  });

  it('recognises a null MX (RFC 7505)', async () => {
    dns.set('example.test', 'MX', [{ exchange: '.', priority: 0 }]);
    expect(await resolver().resolve('example.test')).toEqual({ kind: 'null-mx' });
  });

  it('reports NXDOMAIN, and a name without MX or address, as no-domain', async () => {
    expect(await resolver().resolve('missing.test')).toEqual({ kind: 'no-domain' });
    dns.set('example.test', 'TXT', ['v=spf1 -all']);
    expect(await resolver().resolve('example.test')).toEqual({ kind: 'no-domain' });
  });

  it('reports SERVFAIL and timeouts as temporary', async () => {
    dns.servfail('failing.test').stall('stalled.test');
    const started = Date.now();
    expect(await resolver().resolve('failing.test')).toMatchObject({ kind: 'temporary', reason: expect.stringContaining('ESERVFAIL') });
    expect(await resolver().resolve('stalled.test')).toMatchObject({ kind: 'temporary', reason: expect.stringContaining('ETIMEOUT') });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('skips MX hosts without an address, and is temporary when none is left', async () => {
    dns
      .set('example.test', 'MX', [
        { exchange: 'gone.example.test', priority: 10 },
        { exchange: 'mx.example.test', priority: 20 },
      ])
      .set('mx.example.test', 'A', ['127.0.0.2']);
    expect(await resolver().resolve('example.test')).toMatchObject({ kind: 'hosts', hosts: [{ name: 'mx.example.test' }] });
    dns.remove('mx.example.test');
    expect(await resolver().resolve('example.test')).toMatchObject({ kind: 'temporary', reason: expect.stringContaining('gone.example.test') });
  });

  it('caches answers for cacheMs, but not temporary failures', async () => {
    dns.set('example.test', 'MX', [{ exchange: 'mx.example.test', priority: 10 }]).set('mx.example.test', 'A', ['127.0.0.2']);
    const cached = resolver(60_000);
    await cached.resolve('example.test');
    const asked = dns.queries.length;
    await cached.resolve('example.test');
    expect(dns.queries.length).toBe(asked);

    dns.servfail('flaky.test');
    await cached.resolve('flaky.test');
    dns.set('flaky.test', 'A', ['127.0.0.2']);
    expect(await cached.resolve('flaky.test')).toMatchObject({ kind: 'hosts' });

    const uncached = resolver(0);
    await uncached.resolve('example.test');
    await uncached.resolve('example.test');
    expect(dns.queries.filter((q) => q === 'example.test MX').length).toBe(3);
  });
});
