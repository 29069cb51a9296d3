import { randomBytes } from 'node:crypto';
import type { DomainRecord } from '@herald/domains';
import { effectiveTracking, TrackingLinks, type TrackingDomain } from './tracking-links';
import { TrackingKeys } from './tracking-token';

const EMAIL = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const cname = (status: DomainRecord['status'], name = 'links'): DomainRecord => ({
  record: 'Tracking',
  name,
  type: 'CNAME',
  value: 'track.herald.test',
  ttl: 'Auto',
  status,
  required: false,
});
const domain = (over: Partial<TrackingDomain> = {}): TrackingDomain => ({
  name: 'acme.test',
  openTracking: true,
  clickTracking: true,
  trackingSubdomain: 'links',
  records: [cname('verified')],
  ...over,
});

describe('effectiveTracking', () => {
  it('is on once the flags are on and the tracking CNAME is verified (or being rechecked)', () => {
    expect(effectiveTracking(domain())).toEqual({ open: true, click: true, host: 'links.acme.test' });
    expect(effectiveTracking(domain({ records: [cname('temporary_failure')], openTracking: false }))).toEqual({
      open: false,
      click: true,
      host: 'links.acme.test',
    });
  });

  it('is off by default, without a tracking subdomain, or before its CNAME verifies', () => {
    expect(effectiveTracking(domain({ openTracking: false, clickTracking: false }))).toBeNull();
    expect(effectiveTracking(domain({ trackingSubdomain: null, records: [] }))).toBeNull();
    for (const status of ['not_started', 'pending', 'failed'] as const) expect(effectiveTracking(domain({ records: [cname(status)] }))).toBeNull();
    // A changed subdomain's new CNAME must verify; the old one's status does not count.
    expect(effectiveTracking(domain({ trackingSubdomain: 'clicks', records: [cname('verified'), cname('pending', 'clicks')] }))).toBeNull();
  });
});

describe('TrackingLinks', () => {
  const keys = TrackingKeys.of([randomBytes(32)]);
  const links = new TrackingLinks(keys, { protocol: 'https' });
  const html = '<html><body><a href="https://shop.example/a?x=1&amp;y=2">a</a><a href="mailto:x@acme.test">m</a></body></html>';
  const email = { id: EMAIL, html, headers: null };
  const signedAt = new Date('2026-11-26T17:00:00Z');

  it('gives each recipient its own signed links and pixel on the tracking host', () => {
    const render = links.prepare(effectiveTracking(domain()), email)!;
    const [first, second] = [render(0, signedAt), render(1, signedAt)];
    expect(first).not.toBe(second);
    const click = /href="https:\/\/links\.acme\.test\/t\/c\/([A-Za-z0-9_-]+)"/.exec(first)![1]!;
    expect(keys.verify('click', click)).toEqual({
      kind: 'click',
      emailId: EMAIL,
      position: 0,
      signedAt,
      link: 0,
      url: 'https://shop.example/a?x=1&y=2',
    });
    const open = /<img src="https:\/\/links\.acme\.test\/t\/o\/([A-Za-z0-9_-]+)"/.exec(second)![1]!;
    expect(keys.verify('open', open)).toEqual({ kind: 'open', emailId: EMAIL, position: 1, signedAt });
    expect(first).toContain('href="mailto:x@acme.test"');
    expect(first.indexOf('<img')).toBeLessThan(first.indexOf('</body>'));
  });

  it('does only what the domain turned on, and nothing for an untracked domain or an email without html', () => {
    const opensOnly = links.prepare(effectiveTracking(domain({ clickTracking: false })), email)!(0, signedAt);
    expect(opensOnly).toContain('href="https://shop.example/a?x=1&amp;y=2"');
    expect(opensOnly).toContain('/t/o/');
    const clicksOnly = links.prepare(effectiveTracking(domain({ openTracking: false })), email)!(0, signedAt);
    expect(clicksOnly).not.toContain('<img');
    expect(clicksOnly).toContain('/t/c/');
    expect(links.prepare(null, email)).toBeNull();
    expect(links.prepare(effectiveTracking(domain()), { ...email, html: null })).toBeNull();
    expect(links.prepare(effectiveTracking(domain({ openTracking: false })), { ...email, html: '<p>no links</p>' })).toBeNull();
  });

  it('leaves the email’s List-Unsubscribe target alone and writes the configured scheme and port', () => {
    const local = new TrackingLinks(keys, { protocol: 'http', port: 3000 });
    const out = local.prepare(effectiveTracking(domain()), {
      ...email,
      html: '<a href="https://acme.test/unsub?u=1">unsubscribe</a><a href="https://shop.example/">shop</a>',
      headers: { 'List-Unsubscribe': '<https://acme.test/unsub?u=1>' },
    })!(0, signedAt);
    expect(out).toContain('href="https://acme.test/unsub?u=1"');
    expect(out).toMatch(/href="http:\/\/links\.acme\.test:3000\/t\/c\/[A-Za-z0-9_-]+">shop/);
  });
});
