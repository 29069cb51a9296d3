import { loadConfig } from '@herald/config';
import { TestDnsServer } from '@herald/testing';
import { DmarcInspector, organizationalDomain, parseDmarc } from './dmarc';
import { DnsResolver } from './dns-resolver';

describe('DMARC', () => {
  it('parses a record, defaulting alignment to relaxed', () => {
    expect(parseDmarc('v=DMARC1; p=Quarantine; sp=reject; aspf=s')).toEqual({
      text: 'v=DMARC1; p=Quarantine; sp=reject; aspf=s',
      policy: 'quarantine',
      subdomainPolicy: 'reject',
      adkim: 'r',
      aspf: 's',
    });
    expect(parseDmarc('v=DMARC1; p=maybe')).toMatchObject({ policy: null });
    expect(parseDmarc('v=spf1 -all')).toBeNull();
  });

  it('takes the organizational domain as the last two labels, or three under a known multi-label suffix', () => {
    expect(organizationalDomain('example.com')).toBe('example.com');
    expect(organizationalDomain('send.mail.Example.com.')).toBe('example.com');
    expect(organizationalDomain('send.example.co.uk')).toBe('example.co.uk');
    expect(organizationalDomain('co.uk')).toBe('co.uk');
  });

  describe('DmarcInspector (against a local DNS server)', () => {
    let server: TestDnsServer;
    let inspector: DmarcInspector;
    const now = new Date('2026-01-02T03:04:05.000Z');

    beforeAll(async () => {
      server = await TestDnsServer.start();
      inspector = new DmarcInspector(new DnsResolver(loadConfig({}, { DNS_SERVERS: server.address(), DNS_TIMEOUT_MS: '300' })));
    });
    afterAll(() => server.close());
    beforeEach(() => server.clear());

    it('reports the domain’s own record, its policy and relaxed alignment', async () => {
      server.set('_dmarc.acme.test', 'TXT', ['v=DMARC1; p=reject; adkim=s']);
      expect(await inspector.inspect('acme.test', 'send.acme.test', now)).toEqual({
        kind: 'report',
        report: {
          present: true,
          record: 'v=DMARC1; p=reject; adkim=s',
          policy: 'reject',
          dkimAligned: true,
          spfAligned: true,
          checkedAt: '2026-01-02T03:04:05.000Z',
        },
      });
    });

    it('does not align SPF in strict mode: the Return-Path is a subdomain', async () => {
      server.set('_dmarc.acme.test', 'TXT', ['v=DMARC1; p=none; aspf=s']);
      expect(await inspector.inspect('acme.test', 'send.acme.test', now)).toMatchObject({
        report: { present: true, policy: 'none', dkimAligned: true, spfAligned: false },
      });
    });

    it('falls back to the organizational domain’s record, with its subdomain policy', async () => {
      server.set('_dmarc.acme.test', 'TXT', ['v=DMARC1; p=reject; sp=quarantine']);
      expect(await inspector.inspect('mail.acme.test', 'send.mail.acme.test', now)).toMatchObject({
        report: { present: true, record: 'v=DMARC1; p=reject; sp=quarantine', policy: 'quarantine', spfAligned: true },
      });
      expect(server.queries).toEqual(['_dmarc.mail.acme.test TXT', '_dmarc.acme.test TXT']);
    });

    it('reports no record when there is none, or more than one', async () => {
      expect(await inspector.inspect('acme.test', 'send.acme.test', now)).toMatchObject({
        report: { present: false, record: null, policy: null, dkimAligned: true, spfAligned: true },
      });
      server.set('_dmarc.acme.test', 'TXT', ['v=DMARC1; p=none', 'v=DMARC1; p=reject']);
      expect(await inspector.inspect('acme.test', 'send.acme.test', now)).toMatchObject({ report: { present: false } });
    });

    it('says when DNS could not tell', async () => {
      server.stall('_dmarc.acme.test');
      expect(await inspector.inspect('acme.test', 'send.acme.test', now)).toMatchObject({ kind: 'temporary' });
    });
  });
});
