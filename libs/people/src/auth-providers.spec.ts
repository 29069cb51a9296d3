import { configuredProviders, verifiedGithubEmail } from './auth-providers';

describe('verifiedGithubEmail', () => {
  it('prefers the verified primary address, then any verified one, else none', () => {
    expect(
      verifiedGithubEmail([
        { email: 'Other@x.test', primary: false, verified: true },
        { email: 'Main@x.test', primary: true, verified: true },
      ]),
    ).toBe('main@x.test');
    expect(
      verifiedGithubEmail([
        { email: 'main@x.test', primary: true, verified: false },
        { email: 'other@x.test', primary: false, verified: true },
      ]),
    ).toBe('other@x.test');
    expect(verifiedGithubEmail([{ email: 'main@x.test', primary: true, verified: false }])).toBeNull();
    expect(verifiedGithubEmail([])).toBeNull();
  });
});

describe('configuredProviders', () => {
  it('offers a provider only when its client id is set', () => {
    expect(configuredProviders({})).toEqual([]);
    expect(configuredProviders({ GITHUB_CLIENT_ID: 'id' })).toEqual(['github']);
    expect(configuredProviders({ GOOGLE_CLIENT_ID: 'id', GITHUB_CLIENT_ID: 'id' })).toEqual(['google', 'github']);
  });
});
