import { parseReturnPath, returnPathAddress, verpKey } from './verp';

const EMAIL_ID = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
const key = verpKey(Buffer.from('a deployment secret of 32 bytes!'));

describe('VERP return paths', () => {
  it('round-trips the email id', () => {
    const address = returnPathAddress(EMAIL_ID, 'send.acme.test', key);
    expect(address).toMatch(/^b-3f2b8c1e9a4d4e6f8b7a1c2d3e4f5a6b-[a-z2-7]{10}@send\.acme\.test$/);
    expect(parseReturnPath(address, key)).toBe(EMAIL_ID);
  });

  it('keeps the local part within 64 characters', () => {
    const local = returnPathAddress(EMAIL_ID, 'send.acme.test', key).split('@')[0];
    expect(local.length).toBeLessThanOrEqual(64);
  });

  it('survives case folding and angle brackets', () => {
    const address = returnPathAddress(EMAIL_ID, 'send.acme.test', key);
    expect(parseReturnPath(`<${address.toUpperCase()}>`, key)).toBe(EMAIL_ID);
  });

  it('refuses a tampered tag, another email id, another key and a subaddress tail', () => {
    const address = returnPathAddress(EMAIL_ID, 'send.acme.test', key);
    const [local, domain] = address.split('@');
    const flipped = `${local.slice(0, -1)}${local.endsWith('a') ? 'b' : 'a'}@${domain}`;
    const otherId = address.replace('3f2b8c1e', '3f2b8c1f');

    expect(parseReturnPath(flipped, key)).toBeNull();
    expect(parseReturnPath(otherId, key)).toBeNull();
    expect(parseReturnPath(address, verpKey(undefined))).toBeNull();
    expect(parseReturnPath(`${local}+x@${domain}`, key)).toBeNull();
    expect(parseReturnPath('postmaster@send.acme.test', key)).toBeNull();
  });

  it('derives a stable key, different per secret', () => {
    // The key is an HmacSha256Key (its 32 derived bytes are not exposed): judged by the addresses it makes.
    const address = (k: ReturnType<typeof verpKey>) => returnPathAddress(EMAIL_ID, 'send.acme.test', k);
    expect(address(verpKey(undefined))).toBe(address(verpKey(undefined)));
    expect(address(verpKey(Buffer.from('x')))).not.toBe(address(verpKey(undefined)));
  });

  it('refuses to encode something that is not a UUID', () => {
    expect(() => returnPathAddress('not-a-uuid', 'send.acme.test', key)).toThrow(/Not a UUID/);
  });
});
