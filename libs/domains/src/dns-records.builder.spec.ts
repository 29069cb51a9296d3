import { buildDnsRecords, carryVerification, MailHostsConfig, RecordsKey } from './dns-records.builder';

const config: MailHostsConfig = {
  MAIL_DOMAIN: 'mail.herald.test',
  REGION_BOUNCE_HOSTS: { 'eu-west-1': 'feedback.eu.example.net' },
  REGION_SPF: { 'eu-west-1': 'ip4:203.0.113.0/24 ip6:2001:db8::/32' },
};
const domain = { region: 'us-east-1', customReturnPath: 'send', trackingSubdomain: null };
const key = (id: string, state: RecordsKey['state'], algorithm: RecordsKey['algorithm'] = 'rsa-sha256'): RecordsKey => ({
  id,
  selector: `sel-${id}`,
  algorithm,
  publicKey: `PUB${id}`,
  state,
});

describe('buildDnsRecords', () => {
  it('derives every value from config, defaulting to hosts under MAIL_DOMAIN', () => {
    expect(buildDnsRecords(config, domain, [key('1', 'active')])).toEqual([
      {
        record: 'DKIM',
        name: 'sel-1._domainkey',
        type: 'TXT',
        value: 'v=DKIM1; k=rsa; p=PUB1',
        ttl: 'Auto',
        status: 'not_started',
        required: true,
        dkimKeyId: '1',
      },
      {
        record: 'SPF',
        name: 'send',
        type: 'MX',
        value: 'bounce.us-east-1.mail.herald.test',
        ttl: 'Auto',
        priority: 10,
        status: 'not_started',
        required: true,
      },
      {
        record: 'SPF',
        name: 'send',
        type: 'TXT',
        value: 'v=spf1 include:_spf.us-east-1.mail.herald.test ~all',
        ttl: 'Auto',
        status: 'not_started',
        required: true,
      },
      { record: 'DMARC', name: '_dmarc', type: 'TXT', value: 'v=DMARC1; p=none;', ttl: 'Auto', status: 'not_started', required: false },
    ]);
  });

  it("uses the region's configured bounce host and SPF mechanisms, and the custom return path", () => {
    const records = buildDnsRecords(config, { ...domain, region: 'eu-west-1', customReturnPath: 'bounces' }, [key('1', 'active')]);
    const spf = records.filter((r) => r.record === 'SPF');
    expect(spf).toEqual([
      expect.objectContaining({ name: 'bounces', type: 'MX', value: 'feedback.eu.example.net', priority: 10 }),
      expect.objectContaining({ name: 'bounces', type: 'TXT', value: 'v=spf1 ip4:203.0.113.0/24 ip6:2001:db8::/32 ~all' }),
    ]);
  });

  it('adds a recommended tracking CNAME when a tracking subdomain is set', () => {
    const records = buildDnsRecords(config, { ...domain, trackingSubdomain: 'links' }, []);
    expect(records[records.length - 1]).toEqual({
      record: 'Tracking',
      name: 'links',
      type: 'CNAME',
      value: 'track.mail.herald.test',
      ttl: 'Auto',
      status: 'not_started',
      required: false,
    });
  });

  it('publishes every key but retired ones, RSA first; only active keys are required', () => {
    const keys = [key('ed', 'active', 'ed25519-sha256'), key('old', 'retiring'), key('gone', 'retired'), key('cur', 'active'), key('new', 'pending')];
    const dkim = buildDnsRecords(config, domain, keys).filter((r) => r.record === 'DKIM');
    expect(dkim.map((r) => [r.dkimKeyId, r.required])).toEqual([
      ['old', false],
      ['cur', true],
      ['new', false],
      ['ed', true],
    ]);
    expect(dkim[3].value).toBe('v=DKIM1; k=ed25519; p=PUBed');
  });
});

describe('carryVerification', () => {
  it('keeps what the last check found for unchanged records, and starts new ones over', () => {
    const before = buildDnsRecords(config, { ...domain, trackingSubdomain: 'links' }, [key('1', 'active')]).map((r) => ({
      ...r,
      status: 'verified' as const,
      observed: ['seen'],
    }));
    const rebuilt = buildDnsRecords(config, { ...domain, trackingSubdomain: 'click' }, [key('1', 'active'), key('2', 'pending')]);
    const after = carryVerification(before, rebuilt);
    expect(after.map((r) => [r.record, r.name, r.status, r.observed])).toEqual([
      ['DKIM', 'sel-1._domainkey', 'verified', ['seen']],
      ['DKIM', 'sel-2._domainkey', 'not_started', undefined],
      ['SPF', 'send', 'verified', ['seen']],
      ['SPF', 'send', 'verified', ['seen']],
      ['DMARC', '_dmarc', 'verified', ['seen']],
      ['Tracking', 'click', 'not_started', undefined],
    ]);
  });
});
