import { isIpAddress, passkeyErrorMessage } from './passkey-errors';

describe('passkeyErrorMessage', () => {
  it("puts better-auth's and the browser's codes in words", () => {
    expect(passkeyErrorMessage({ code: 'AUTH_CANCELLED', message: 'Auth cancelled' })).toMatch(/^No passkey was used/);
    expect(passkeyErrorMessage({ code: 'PASSKEY_NOT_FOUND', message: 'Passkey not found' })).toMatch(/^Herald does not know that passkey/);
    expect(passkeyErrorMessage({ code: 'ERROR_PASSTHROUGH_SEE_CAUSE_PROPERTY', message: 'Auth cancelled' })).toMatch(/^No passkey was used/);
    expect(passkeyErrorMessage({ code: 'ERROR_INVALID_DOMAIN', message: '127.0.0.1 is an invalid domain' })).toContain('not an IP address');
  });

  it("keeps Herald's own sentence, and quotes a bare message", () => {
    const herald =
      'The passkey did not check that it is you (no PIN, fingerprint or face), which Herald needs of a passkey. Use one that does, or another way to sign in.';
    expect(passkeyErrorMessage({ code: 'PASSKEY_USER_NOT_VERIFIED', message: herald })).toBe(herald);
    expect(passkeyErrorMessage({ code: 'SOMETHING', message: 'Something odd' })).toBe('The passkey did not work (Something odd). Try again.');
    expect(passkeyErrorMessage({ status: 429 })).toBe('Too many attempts. Wait a minute and try again.');
    expect(passkeyErrorMessage({})).toBe('The passkey did not work. Try again.');
    expect(passkeyErrorMessage(null)).toBeNull();
  });
});

describe('isIpAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['[::1]', true],
    ['::1', true],
    ['localhost', false],
    ['dash.herald.example', false],
  ])('%s → %s', (host, expected) => expect(isIpAddress(host)).toBe(expected));
});
