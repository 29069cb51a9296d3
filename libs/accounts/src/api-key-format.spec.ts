import fc from 'fast-check';
import { API_KEY_LENGTH, generateApiKey, hashApiKey, parseApiKey, verifySecret } from './api-key-format';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('API key format', () => {
  it('round-trips: a generated key parses back to its public id and verifies against its hash', () => {
    const key = generateApiKey();
    expect(key.token).toMatch(/^hr_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
    expect(key.token).toHaveLength(API_KEY_LENGTH);
    expect(key.token.slice(3, 15)).toBe(key.publicId);
    expect(parseApiKey(key.token)).toEqual({ publicId: key.publicId });
    expect(key.secretHash).toEqual(hashApiKey(key.token));
    expect(verifySecret(key.token, key.secretHash)).toBe(true);
  });

  it('generates distinct keys', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => generateApiKey().token));
    expect(tokens.size).toBe(1000);
  });

  it('catches a changed character with the checksum', () => {
    const { token } = generateApiKey();
    const i = 20; // inside the secret, so the shape still holds and only the checksum can tell
    const changed = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
    expect(changed).toMatch(/^hr_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}$/);
    expect(parseApiKey(changed)).toBeNull();
  });

  it('rejects a wrong prefix, shape or length', () => {
    const { token } = generateApiKey();
    expect(parseApiKey(`re_${token.slice(3)}`)).toBeNull();
    expect(parseApiKey(token.replace('_', '-'))).toBeNull();
    expect(parseApiKey(token.slice(0, -1))).toBeNull();
    expect(parseApiKey(`${token}0`)).toBeNull();
    expect(parseApiKey('')).toBeNull();
    expect(parseApiKey('re_c1tpEyD8_NKFusih9vKVQknRAQfmFcWCv')).toBeNull();
  });

  it('does not verify another key or a truncated hash', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(verifySecret(a.token, b.secretHash)).toBe(false);
    expect(verifySecret(a.token, a.secretHash.subarray(0, 16))).toBe(false);
  });

  it('rejects any single-character change offline', () => {
    const tokens = Array.from({ length: 20 }, () => generateApiKey().token);
    const replacement = fc.oneof(
      fc.constantFrom(...BASE62),
      fc.constantFrom('_', '-', ' ', '=', '/', '+', '.'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...tokens), fc.nat({ max: API_KEY_LENGTH - 1 }), replacement, (token, i, char) => {
        fc.pre(token[i] !== char);
        const changed = token.slice(0, i) + char + token.slice(i + 1);
        expect(parseApiKey(changed)).toBeNull();
      }),
      { numRuns: 5000 },
    );
  });

  it('rejects any single inserted or deleted character', () => {
    const { token } = generateApiKey();
    fc.assert(
      fc.property(fc.nat({ max: API_KEY_LENGTH - 1 }), fc.constantFrom(...BASE62), (i, char) => {
        expect(parseApiKey(token.slice(0, i) + token.slice(i + 1))).toBeNull();
        expect(parseApiKey(token.slice(0, i) + char + token.slice(i))).toBeNull();
      }),
    );
  });
});
