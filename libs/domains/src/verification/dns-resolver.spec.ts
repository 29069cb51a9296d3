import { loadConfig } from '@herald/config';
import { TestDnsServer } from '@herald/testing';
import { DnsResolver } from './dns-resolver';

describe('DnsResolver (against a local DNS server)', () => {
  const TIMEOUT_MS = 300;
  let server: TestDnsServer;
  let dns: DnsResolver;

  beforeAll(async () => {
    server = await TestDnsServer.start();
    dns = new DnsResolver(loadConfig({}, { DNS_SERVERS: server.address(), DNS_TIMEOUT_MS: String(TIMEOUT_MS) }));
  });
  afterAll(() => server.close());
  beforeEach(() => server.clear());

  it('answers TXT with each record’s character-strings joined', async () => {
    const long = `v=DKIM1; k=rsa; p=${'B'.repeat(400)}`;
    server.set('s._domainkey.acme.test', 'TXT', [long]);
    expect(await dns.resolveTxt('s._domainkey.acme.test')).toEqual({ kind: 'answer', values: [long] });
  });

  it('answers MX, CNAME, A and AAAA', async () => {
    server
      .set('send.acme.test', 'MX', [{ exchange: 'bounce.herald.test', priority: 10 }])
      .set('links.acme.test', 'CNAME', ['track.herald.test'])
      .set('host.acme.test', 'A', ['192.0.2.7'])
      .set('host.acme.test', 'AAAA', ['2001:db8::7']);
    expect(await dns.resolveMx('send.acme.test')).toEqual({ kind: 'answer', values: [{ exchange: 'bounce.herald.test', priority: 10 }] });
    expect(await dns.resolveCname('links.acme.test')).toEqual({ kind: 'answer', values: ['track.herald.test'] });
    expect(await dns.resolveA('host.acme.test')).toEqual({ kind: 'answer', values: ['192.0.2.7'] });
    expect(await dns.resolveAaaa('host.acme.test')).toEqual({ kind: 'answer', values: ['2001:db8::7'] });
  });

  it('tells NXDOMAIN from NODATA', async () => {
    server.set('acme.test', 'TXT', ['x']);
    expect(await dns.resolveTxt('nothing.acme.test')).toEqual({ kind: 'nxdomain' });
    expect(await dns.resolveMx('acme.test')).toEqual({ kind: 'nodata' });
  });

  it('gives up on a silent server within DNS_TIMEOUT_MS', async () => {
    server.stall('slow.acme.test');
    const started = Date.now();
    const outcome = await dns.resolveTxt('slow.acme.test');
    expect(outcome).toMatchObject({ kind: 'timeout', message: expect.stringContaining('slow.acme.test') });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 250);
  });

  it('reports SERVFAIL as an error', async () => {
    server.servfail('broken.acme.test');
    expect(await dns.resolveTxt('broken.acme.test')).toEqual({ kind: 'error', message: 'SERVFAIL for broken.acme.test' });
  });

  it('sees a change at once (no answer is cached between questions)', async () => {
    server.set('flip.acme.test', 'TXT', ['one']);
    expect(await dns.resolveTxt('flip.acme.test')).toEqual({ kind: 'answer', values: ['one'] });
    server.set('flip.acme.test', 'TXT', ['two']);
    expect(await dns.resolveTxt('flip.acme.test')).toEqual({ kind: 'answer', values: ['two'] });
  });
});
