import { verifiedGithubEmail } from './auth-providers';

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
