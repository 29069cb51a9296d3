/** What better-auth's passkey client answers when a ceremony fails: its code (or the browser's, via SimpleWebAuthn) and a message. */
export interface PasskeyFailure {
  code?: string;
  message?: string;
  status?: number;
}

/** An IPv4 or IPv6 literal: WebAuthn refuses IP addresses as the site a passkey belongs to. */
export function isIpAddress(hostname: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) || hostname.startsWith('[') || hostname.includes(':');
}

const WORDS: Record<string, string> = {
  AUTH_CANCELLED:
    'No passkey was used: the request was cancelled or timed out, or this device has no passkey for Herald. Try again, or sign in another way.',
  ERROR_CEREMONY_ABORTED: 'The passkey request was cancelled. Try again.',
  REGISTRATION_CANCELLED: 'Adding the passkey was cancelled or timed out. Try again.',
  PREVIOUSLY_REGISTERED: 'This device already holds a passkey for your account.',
  ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED: 'This device already holds a passkey for your account.',
  PASSKEY_NOT_FOUND: 'Herald does not know that passkey (it may have been removed from your account). Sign in another way.',
  CHALLENGE_NOT_FOUND: 'The passkey request expired. Try again.',
  ERROR_INVALID_DOMAIN: 'Passkeys work only when the dashboard is opened at a domain name, not an IP address.',
  ERROR_INVALID_RP_ID: 'Passkeys work only when the dashboard is opened at the address Herald is configured with (DASHBOARD_URL).',
  ERROR_AUTHENTICATOR_MISSING_USER_VERIFICATION_SUPPORT:
    'This authenticator cannot check that it is you (no PIN, fingerprint or face), which Herald needs of a passkey. Use another one.',
  ERROR_AUTHENTICATOR_MISSING_DISCOVERABLE_CREDENTIAL_SUPPORT:
    'This authenticator cannot keep a passkey (a discoverable credential). Use another one.',
};

/**
 * Words for a failed passkey sign-in or registration: what its code means (better-auth's passkey
 * codes and the browser's, through SimpleWebAuthn, say little by themselves), else the server's
 * message when it is a sentence (Herald's own refusals are), else that message quoted.
 */
export function passkeyErrorMessage(failure: PasskeyFailure | null | undefined): string | null {
  if (!failure) return null;
  // better-auth's client answers some browser failures with its own message ("Auth cancelled") under the browser's code.
  const known = WORDS[failure.code?.toUpperCase() ?? ''] ?? WORDS[failure.message?.trim().toUpperCase().replace(/\s+/g, '_') ?? ''];
  if (known) return known;
  if (failure.status === 429) return 'Too many attempts. Wait a minute and try again.';
  const message = failure.message?.trim();
  if (!message) return 'The passkey did not work. Try again.';
  return /[.!?]$/.test(message) ? message : `The passkey did not work (${message}). Try again.`;
}
