import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { TrackingKeys, type ClickClaims, type OpenClaims } from './tracking-token';

const EMAIL = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const SIGNED_AT = new Date('2026-11-26T17:00:00Z');
const click: ClickClaims = { kind: 'click', emailId: EMAIL, position: 3, signedAt: SIGNED_AT, link: 7, url: 'https://shop.example/p?id=1&ref=mail' };
const open: OpenClaims = { kind: 'open', emailId: EMAIL, position: 3, signedAt: SIGNED_AT };

describe('tracking tokens', () => {
  const keys = TrackingKeys.of([randomBytes(32)]);

  it('verifies what it signed, giving back every claim', () => {
    expect(keys.verify('click', keys.sign(click))).toEqual(click);
    expect(keys.verify('open', keys.sign(open))).toEqual(open);
  });

  it('is URL-safe and one path segment', () => {
    expect(keys.sign(click)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('refuses an open token as a click and a click token as an open', () => {
    expect(keys.verify('click', keys.sign(open))).toBeNull();
    expect(keys.verify('open', keys.sign(click))).toBeNull();
  });

  it('refuses a token with any byte changed, truncated or extended', () => {
    const token = keys.sign(click);
    const bytes = Buffer.from(token, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const changed = Buffer.from(bytes);
      changed[i] ^= 0x01;
      expect(keys.verify('click', changed.toString('base64url'))).toBeNull();
    }
    for (let cut = 1; cut < token.length; cut++) expect(keys.verify('click', token.slice(0, token.length - cut))).toBeNull();
    expect(keys.verify('click', `${token}A`)).toBeNull();
    expect(keys.verify('click', `${token}=`)).toBeNull();
  });

  it('refuses another target URL or recipient under the original signature (no open redirect)', () => {
    const token = keys.sign(click);
    const forged = keys.sign({ ...click, url: 'https://evil.example/' });
    const mac = Buffer.from(token, 'base64url').subarray(-16);
    const body = Buffer.from(forged, 'base64url').subarray(0, -16);
    expect(keys.verify('click', Buffer.concat([body, mac]).toString('base64url'))).toBeNull();
  });

  it('refuses a token re-signed with a key it does not hold', () => {
    const other = TrackingKeys.of([randomBytes(32)]);
    expect(keys.verify('click', other.sign(click))).toBeNull();
  });

  it('rotates: the first key signs, every listed key verifies, a dropped key no longer does', () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = TrackingKeys.of([oldKey]).sign(click);
    const rotated = TrackingKeys.of([newKey, oldKey]);
    expect(rotated.verify('click', before)).toEqual(click);
    expect(TrackingKeys.of([newKey]).verify('click', rotated.sign(click))).toEqual(click);
    expect(TrackingKeys.of([newKey]).verify('click', before)).toBeNull();
  });

  it('derives its default key from DKIM_ENCRYPTION_KEY, and uses TRACKING_KEYS when set', () => {
    const dkim = randomBytes(32).toString('base64');
    const a = TrackingKeys.fromConfig({ DKIM_ENCRYPTION_KEY: dkim });
    expect(TrackingKeys.fromConfig({ DKIM_ENCRYPTION_KEY: dkim }).verify('open', a.sign(open))).toEqual(open);
    expect(TrackingKeys.fromConfig({ DKIM_ENCRYPTION_KEY: randomBytes(32).toString('base64') }).verify('open', a.sign(open))).toBeNull();
    const explicit = randomBytes(32);
    expect(
      TrackingKeys.of([explicit]).verify(
        'open',
        TrackingKeys.fromConfig({ TRACKING_KEYS: [explicit.toString('base64')], DKIM_ENCRYPTION_KEY: dkim }).sign(open),
      ),
    ).toEqual(open);
  });

  it('round-trips any URL, recipient and link index', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.nat(65535), fc.nat(65535), (url, position, link) => {
        const claims: ClickClaims = { ...click, url, position, link };
        expect(keys.verify('click', keys.sign(claims))).toEqual(claims);
      }),
    );
  });

  it('is HMAC-SHA256 over the kind tag and the body, truncated to 16 bytes, for keys shorter and longer than a block', () => {
    for (const length of [16, 32, 64, 65, 100]) {
      const key = randomBytes(length);
      const token = Buffer.from(TrackingKeys.of([key]).sign(click), 'base64url');
      const body = token.subarray(0, token.length - 16);
      const expected = createHmac('sha256', key).update(Buffer.of(0x63)).update(body).digest().subarray(0, 16);
      expect(token.subarray(token.length - 16).toString('hex')).toBe(expected.toString('hex'));
    }
  });

  it('refuses garbage without throwing', () => {
    fc.assert(fc.property(fc.string(), (text) => expect(keys.verify('click', text)).toBeNull()));
  });
});
