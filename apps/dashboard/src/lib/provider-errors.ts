/** The sign-in providers the dashboard offers, by better-auth's provider id. */
export const PROVIDERS = { google: 'Google', github: 'GitHub' } as const;
export type Provider = keyof typeof PROVIDERS;

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && Object.hasOwn(PROVIDERS, value);
}

/** The provider's name for a message: "Google", "GitHub", or "the provider" when the page was not told. */
function nameOf(provider: unknown): string {
  return isProvider(provider) ? PROVIDERS[provider] : 'the provider';
}

/** "your GitHub account", or "your account at the provider". */
function accountOf(provider: unknown): string {
  return isProvider(provider) ? `your ${PROVIDERS[provider]} account` : 'your account at the provider';
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** Codes that mean the round trip to the provider was broken (expired state, another tab, a reload). */
const RESTART = new Set(['state_mismatch', 'state_not_found', 'please_restart_the_process', 'invalid_callback_request', 'no_code', 'invalid_code']);

/**
 * Words for the `?error=` better-auth puts on the page it sends the browser back to after a
 * failed sign-in with Google or GitHub (the sign-in page, told `?provider=`) or a bad email
 * verification link. Every code gets a sentence: a known one says why and what to do next.
 */
export function providerErrorMessage(code: string, provider?: unknown): string | null {
  if (!code) return null;
  const name = nameOf(provider);
  switch (code.toLowerCase()) {
    case 'access_denied':
      return `You declined to let Herald use ${accountOf(provider)}, so you are not signed in. Try again, or sign in another way.`;
    case 'email_not_found':
    case 'email_not_verified':
      return provider === 'github'
        ? 'Your GitHub account has no verified email address, and Herald signs you in by a verified address. Verify one at github.com/settings/emails, then sign in with GitHub again.'
        : `${capitalised(name)} did not give Herald a verified email address, and Herald signs you in by a verified address. Verify your address with ${name}, or sign in with your password.`;
    case 'account_not_linked':
      return `A Herald account already has the address of ${accountOf(provider)}, and they were not linked because the address is not verified at both. Sign in with your password (verifying your address if asked), then sign in with ${name} again.`;
    case 'unable_to_get_user_info':
      return `${capitalised(name)} did not tell Herald who you are. Try again in a moment.`;
    case 'oauth_provider_not_found':
    case 'provider_not_found':
      return `Signing in with ${name} is not set up on this Herald. Sign in with your password.`;
    case 'invalid_token':
      return 'That link is not valid (it may have been used already). Sign in, and a new verification link is sent if one is needed.';
    case 'token_expired':
      return 'That link has expired. Sign in, and a new verification link is sent if one is needed.';
    default:
      if (RESTART.has(code.toLowerCase())) return `The sign-in with ${name} took too long or was started in another window. Try again.`;
      return `Signing in with ${name} failed (${code.replace(/_/g, ' ')}). Try again.`;
  }
}

/**
 * Words for the `?error=` of a failed link from the Account page (better-auth's link callback):
 * the account is not linked, and why.
 */
export function linkErrorMessage(code: string, provider?: unknown): string | null {
  if (!code) return null;
  const name = nameOf(provider);
  switch (code.toLowerCase()) {
    case 'access_denied':
      return `You declined at ${name}, so nothing was linked.`;
    case 'email_does_not_match':
      return `That ${name} account has a different email address from this Herald account, so it was not linked. Link a ${name} account with the same address.`;
    case 'account_already_linked_to_different_user':
      return `That ${name} account is already linked to another Herald account. Unlink it there first.`;
    case 'unable_to_link_account':
    case 'email_not_found':
    case 'email_not_verified':
      return `${capitalised(name)} has not verified that account's email address, so it was not linked. Verify it with ${name}, then link again.`;
    default:
      if (RESTART.has(code.toLowerCase())) return `Linking ${name} took too long or was started in another window. Try again.`;
      return `Linking ${name} failed (${code.replace(/_/g, ' ')}). Try again.`;
  }
}
