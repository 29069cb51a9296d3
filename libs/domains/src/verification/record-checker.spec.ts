import { loadConfig } from '@herald/config';
import { TestDnsServer } from '@herald/testing';
import { DomainRecord } from '../domain.types';
import { DnsResolver } from './dns-resolver';
import { RecordChecker, recordHost } from './record-checker';

const DOMAIN = 'acme.test';
const KEY = `MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA${'k'.repeat(300)}IDAQAB`;
const OTHER_KEY = `MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA${'z'.repeat(300)}IDAQAB`;

const record = (r: Partial<DomainRecord> & Pick<DomainRecord, 'record' | 'name' | 'type' | 'value'>): DomainRecord => ({
  ttl: 'Auto',
  status: 'not_started',
  required: r.record === 'DKIM' || r.record === 'SPF',
  ...r,
});
const dkim = record({ record: 'DKIM', name: 'h1._domainkey', type: 'TXT', value: `v=DKIM1; k=rsa; p=${KEY}` });
const spf = record({ record: 'SPF', name: 'send', type: 'TXT', value: 'v=spf1 include:_spf.us-east-1.herald.test ~all' });
const spfIp = record({ record: 'SPF', name: 'send', type: 'TXT', value: 'v=spf1 ip4:203.0.113.7 ip6:2001:db8::7 ~all' });
const mx = record({ record: 'SPF', name: 'send', type: 'MX', value: 'bounce.us-east-1.herald.test', priority: 10 });
const dmarc = record({ record: 'DMARC', name: '_dmarc', type: 'TXT', value: 'v=DMARC1; p=none;' });
const tracking = record({ record: 'Tracking', name: 'links', type: 'CNAME', value: 'track.herald.test' });

describe('RecordChecker (against a local DNS server)', () => {
  let server: TestDnsServer;
  let checker: RecordChecker;

  beforeAll(async () => {
    server = await TestDnsServer.start();
    checker = new RecordChecker(new DnsResolver(loadConfig({}, { DNS_SERVERS: server.address(), DNS_TIMEOUT_MS: '1500' })));
  });
  afterAll(() => server.close());
  beforeEach(() => server.clear());

  describe('DKIM', () => {
    const host = `h1._domainkey.${DOMAIN}`;

    it('verifies the expected key whatever the tag order and folding whitespace', async () => {
      const published = `k=rsa;  p=${KEY.slice(0, 100)} ${KEY.slice(100)} ; v=DKIM1`;
      server.set(host, 'TXT', [published, 'some-other=text']);
      expect(await checker.check(dkim, DOMAIN, 'pending')).toEqual({ status: 'verified', observed: [published, 'some-other=text'] });
    });

    it('fails another key at once, even inside the window', async () => {
      server.set(host, 'TXT', [`v=DKIM1; k=rsa; p=${OTHER_KEY}`]);
      expect(await checker.check(dkim, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: 'DKIM key does not match' });
    });

    it('fails a revoked key, another key type and two key records at one selector', async () => {
      server.set(host, 'TXT', ['v=DKIM1; p=']);
      expect(await checker.check(dkim, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: 'DKIM key is revoked (empty p=)' });
      server.set(host, 'TXT', [`v=DKIM1; k=ed25519; p=${KEY}`]);
      expect(await checker.check(dkim, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: expect.stringContaining('key type') });
      server.set(host, 'TXT', [`v=DKIM1; p=${KEY}`, `v=DKIM1; p=${OTHER_KEY}`]);
      expect(await checker.check(dkim, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: expect.stringContaining('more than one') });
    });

    it('reports a missing record as pending or failed, as the caller says', async () => {
      expect(await checker.check(dkim, DOMAIN, 'pending')).toEqual({ status: 'pending', observed: [], problem: `${host} does not exist (NXDOMAIN)` });
      expect(await checker.check(dkim, DOMAIN, 'failed')).toMatchObject({ status: 'failed' });
      server.set(host, 'TXT', ['not a key']);
      expect(await checker.check(dkim, DOMAIN, 'pending')).toMatchObject({
        status: 'pending',
        observed: ['not a key'],
        problem: expect.stringContaining('no DKIM key record'),
      });
    });

    it('reports a timeout or SERVFAIL as a temporary failure', async () => {
      server.stall(host);
      expect(await checker.check(dkim, DOMAIN, 'failed')).toMatchObject({
        status: 'temporary_failure',
        problem: expect.stringContaining('DNS lookup failed'),
      });
      server.clear().servfail(host);
      expect(await checker.check(dkim, DOMAIN, 'failed')).toMatchObject({
        status: 'temporary_failure',
        problem: expect.stringContaining('SERVFAIL'),
      });
    });
  });

  describe('SPF TXT', () => {
    const host = `send.${DOMAIN}`;
    const check = (r = spf) => checker.check(r, DOMAIN, 'pending');

    it('verifies the expected record, and one that adds the customer’s own mechanisms', async () => {
      server.set(host, 'TXT', [spf.value]);
      expect(await check()).toMatchObject({ status: 'verified' });
      server.set(host, 'TXT', ['v=spf1 include:_spf.google.com INCLUDE:_spf.us-east-1.herald.test. -all', 'google-site-verification=x']);
      expect(await check()).toMatchObject({ status: 'verified' });
    });

    it('accepts an address inside a wider published network', async () => {
      server.set(host, 'TXT', ['v=spf1 ip4:203.0.113.0/24 +ip6:2001:db8::/32 ~all']);
      expect(await check(spfIp)).toMatchObject({ status: 'verified' });
      server.set(host, 'TXT', ['v=spf1 ip4:203.0.114.0/24 ip6:2001:db8::/32 ~all']);
      expect(await check(spfIp)).toMatchObject({ status: 'failed', problem: expect.stringContaining('ip4:203.0.113.7') });
    });

    it('fails a record that does not pass Herald: missing, after "all", or not a pass qualifier', async () => {
      for (const published of [
        'v=spf1 include:_spf.google.com ~all',
        'v=spf1 -all include:_spf.us-east-1.herald.test',
        'v=spf1 ~include:_spf.us-east-1.herald.test -all',
      ]) {
        server.set(host, 'TXT', [published]);
        expect(await check()).toMatchObject({
          status: 'failed',
          observed: [published],
          problem: 'SPF record does not authorize Herald: needs include:_spf.us-east-1.herald.test before any "all"',
        });
      }
    });

    it('fails two v=spf1 records (RFC 7208 permerror)', async () => {
      server.set(host, 'TXT', [spf.value, 'v=spf1 -all']);
      expect(await check()).toMatchObject({ status: 'failed', problem: expect.stringContaining('more than one v=spf1 record') });
    });

    it('reports no v=spf1 record as absent', async () => {
      server.set(host, 'TXT', ['v=spf10 nonsense']);
      expect(await check()).toMatchObject({ status: 'pending', problem: `no v=spf1 record at ${host}` });
    });
  });

  describe('SPF MX', () => {
    const host = `send.${DOMAIN}`;

    it('verifies an MX to the bounce host (case and root dot aside)', async () => {
      server.set(host, 'MX', [{ exchange: 'Bounce.US-EAST-1.herald.test', priority: 10 }]);
      expect(await checker.check(mx, DOMAIN, 'pending')).toEqual({ status: 'verified', observed: ['10 Bounce.US-EAST-1.herald.test'] });
    });

    it('fails an MX elsewhere, or another MX preferred over the bounce host', async () => {
      server.set(host, 'MX', [{ exchange: 'mx.other.test', priority: 10 }]);
      expect(await checker.check(mx, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: expect.stringContaining('does not point to') });
      server.set(host, 'MX', [
        { exchange: 'bounce.us-east-1.herald.test', priority: 20 },
        { exchange: 'mx.other.test', priority: 5 },
      ]);
      expect(await checker.check(mx, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: expect.stringContaining('preferred over') });
    });

    it('reports no MX as absent', async () => {
      server.set(host, 'TXT', [spf.value]);
      expect(await checker.check(mx, DOMAIN, 'failed')).toEqual({ status: 'failed', observed: [], problem: `no MX record at ${host}` });
    });
  });

  describe('DMARC and tracking', () => {
    it('verifies any single DMARC record with a valid policy', async () => {
      server.set(`_dmarc.${DOMAIN}`, 'TXT', ['v=DMARC1; p=reject; rua=mailto:d@acme.test']);
      expect(await checker.check(dmarc, DOMAIN, 'pending')).toMatchObject({ status: 'verified' });
      server.set(`_dmarc.${DOMAIN}`, 'TXT', ['v=DMARC1; rua=mailto:d@acme.test']);
      expect(await checker.check(dmarc, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: expect.stringContaining('p=') });
      server.set(`_dmarc.${DOMAIN}`, 'TXT', ['v=DMARC1; p=none', 'v=DMARC1; p=reject']);
      expect(await checker.check(dmarc, DOMAIN, 'pending')).toMatchObject({ status: 'failed', problem: expect.stringContaining('more than one') });
      server.remove(`_dmarc.${DOMAIN}`);
      expect(await checker.check(dmarc, DOMAIN, 'pending')).toMatchObject({ status: 'pending' });
    });

    it('checks the tracking CNAME target', async () => {
      server.set(`links.${DOMAIN}`, 'CNAME', ['track.herald.test.']);
      expect(await checker.check(tracking, DOMAIN, 'pending')).toMatchObject({ status: 'verified' });
      server.set(`links.${DOMAIN}`, 'CNAME', ['elsewhere.test']);
      expect(await checker.check(tracking, DOMAIN, 'pending')).toMatchObject({
        status: 'failed',
        problem: `CNAME at links.${DOMAIN} points to elsewhere.test, not track.herald.test`,
      });
    });
  });

  it('resolves record names relative to the domain', () => {
    expect(recordHost({ name: 'send' }, DOMAIN)).toBe('send.acme.test');
    expect(recordHost({ name: '@' }, DOMAIN)).toBe('acme.test');
    expect(recordHost({ name: 'send.acme.test.' }, DOMAIN)).toBe('send.acme.test');
  });
});
