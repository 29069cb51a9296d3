import { MachineClassifier } from './machine-classifier';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const classifier = new MachineClassifier({ appleProxyRanges: ['17.0.0.0/8'], scannerWindowSeconds: 10 });
const hit = (over: Partial<Parameters<MachineClassifier['reason']>[0]>) =>
  classifier.reason({ ipAddress: '203.0.113.9', userAgent: CHROME, kind: 'open', sinceDeliveryMs: 60_000, ...over });

describe('MachineClassifier', () => {
  it('takes a browser for a person', () => {
    expect(hit({})).toBeNull();
    expect(hit({ kind: 'click' })).toBeNull();
  });

  it('flags Apple Mail Privacy Protection: its bare user agent, or an address in Apple’s ranges', () => {
    expect(hit({ userAgent: 'Mozilla/5.0' })).toBe('apple_privacy');
    expect(hit({ ipAddress: '17.58.100.1' })).toBe('apple_privacy');
    expect(hit({ ipAddress: '::ffff:17.1.2.3' })).toBe('apple_privacy');
    expect(hit({ ipAddress: '18.0.0.1' })).toBeNull();
    expect(hit({ ipAddress: '16.255.255.255' })).toBeNull();
  });

  it('matches ranges of any size, IPv4 and IPv6', () => {
    const ranges = new MachineClassifier({ appleProxyRanges: ['192.0.2.128/25', '198.51.100.7', '2620:149::/32'], scannerWindowSeconds: 10 });
    const from = (ipAddress: string) => ranges.reason({ ipAddress, userAgent: CHROME, kind: 'open', sinceDeliveryMs: 60_000 });
    expect([from('192.0.2.128'), from('192.0.2.255'), from('198.51.100.7'), from('2620:149:a:1::1')]).toEqual(Array(4).fill('apple_privacy'));
    expect([from('192.0.2.127'), from('198.51.100.8'), from('2620:150::1'), from('not an address')]).toEqual(Array(4).fill(null));
  });

  it('flags crawlers, scanners and scripts by user agent, and a missing user agent', () => {
    for (const userAgent of ['curl/8.5.0', 'python-requests/2.31', 'Barracuda Sentinel (EE)', 'node', '']) {
      expect(hit({ userAgent })).toBe('user_agent');
    }
  });

  it('takes webmail image proxies (which fetch when a person opens) for the person', () => {
    expect(hit({ userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' })).toBeNull();
    expect(hit({ userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html' })).toBeNull();
  });

  it('gives a remembered user agent the verdict it had', () => {
    for (let round = 0; round < 2; round++) {
      expect(hit({ userAgent: 'curl/8.5.0' })).toBe('user_agent');
      expect(hit({})).toBeNull();
      expect(hit({ userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html' })).toBeNull();
    }
  });

  it('flags a click within the scanner window of delivery as a link scanner, not an open', () => {
    expect(hit({ kind: 'click', sinceDeliveryMs: 2_000 })).toBe('link_scanner');
    expect(hit({ kind: 'click', sinceDeliveryMs: 10_000 })).toBeNull();
    expect(hit({ kind: 'open', sinceDeliveryMs: 2_000 })).toBeNull();
  });
});
