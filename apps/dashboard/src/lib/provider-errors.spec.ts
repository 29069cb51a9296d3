import { isProvider, linkErrorMessage, providerErrorMessage } from './provider-errors';

describe('providerErrorMessage', () => {
  it('names the provider and says the person is signed out after a declined consent', () => {
    expect(providerErrorMessage('access_denied', 'google')).toBe(
      'You declined to let Herald use your Google account, so you are not signed in. Try again, or sign in another way.',
    );
    expect(providerErrorMessage('access_denied', 'github')).toContain('your GitHub account');
  });

  it('sends a GitHub account without a verified address to the page where GitHub verifies one', () => {
    expect(providerErrorMessage('email_not_found', 'github')).toContain('github.com/settings/emails');
    expect(providerErrorMessage('email_not_found', 'google')).toMatch(/^Google did not give Herald a verified email address/);
  });

  it('speaks of "the provider" when the page was not told which, or was told something else', () => {
    expect(providerErrorMessage('unable_to_get_user_info')).toBe('The provider did not tell Herald who you are. Try again in a moment.');
    expect(providerErrorMessage('access_denied', 'toString')).toContain('use your account at the provider,');
    expect(isProvider('toString')).toBe(false);
  });

  it('asks to start again after a broken round trip, and puts an unknown code in words', () => {
    expect(providerErrorMessage('state_not_found', 'github')).toBe(
      'The sign-in with GitHub took too long or was started in another window. Try again.',
    );
    expect(providerErrorMessage('INVALID_CODE', 'google')).toContain('took too long');
    expect(providerErrorMessage('some_new_code', 'google')).toBe('Signing in with Google failed (some new code). Try again.');
    expect(providerErrorMessage('')).toBeNull();
  });
});

describe('linkErrorMessage', () => {
  it('says why an account was not linked', () => {
    expect(linkErrorMessage('email_does_not_match', 'google')).toMatch(/^That Google account has a different email address/);
    expect(linkErrorMessage('account_already_linked_to_different_user', 'github')).toContain('already linked to another Herald account');
    expect(linkErrorMessage('unable_to_link_account', 'github')).toMatch(/^GitHub has not verified/);
    expect(linkErrorMessage('whatever')).toBe('Linking the provider failed (whatever). Try again.');
    expect(linkErrorMessage('')).toBeNull();
  });
});
