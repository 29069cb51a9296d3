import { passkeyClient } from '@better-auth/passkey/client';
import { twoFactorClient } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/react';
import { csrfHeaders } from './api';
import { errorMessage } from './api-error';

/**
 * better-auth's own redirect (its client follows every answer's `{ redirect: true, url }` with a
 * full navigation), except after a password sign-in: there the SPA moves on itself, and following
 * the callbackURL as well loaded the dashboard twice. The callbackURL is still sent, for the
 * verification link better-auth mails again when an unverified address signs in.
 */
const followRedirects = {
  id: 'herald-redirect',
  name: 'Redirect',
  hooks: {
    onSuccess(context: { data: unknown; request: { url: string | URL } }) {
      if (String(context.request.url).endsWith('/sign-in/email')) return;
      const { redirect, url } = (context.data ?? {}) as { redirect?: unknown; url?: unknown };
      if (redirect === true && typeof url === 'string' && isNavigable(url)) window.location.href = url;
    },
  },
};

/** A relative path or an http(s) address: never `javascript:` or `data:` from an answer. */
function isNavigable(url: string): boolean {
  if (url.startsWith('/') && !url.startsWith('//')) return true;
  try {
    return ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** better-auth's client on /dashboard/api/auth, carrying the CSRF header on its state changes like every other call. */
export const authClient = createAuthClient({
  basePath: '/dashboard/api/auth',
  disableDefaultFetchPlugins: true,
  fetchOptions: {
    plugins: [followRedirects],
    credentials: 'same-origin',
    async onRequest(context) {
      for (const [name, value] of Object.entries(await csrfHeaders(context.method))) context.headers.set(name, value);
      return context;
    },
  },
  plugins: [
    twoFactorClient({
      onTwoFactorRedirect() {
        window.location.assign('/dashboard/two-factor');
      },
    }),
    passkeyClient(),
  ],
});

/**
 * The callbackURL of sign-up and sign-in: where the emailed verification link lands (better-auth
 * redirects there, or adds `?error=` when the link is bad), and where a successful sign-in is sent
 * by better-auth's client. `/dashboard/` shows the first team when signed in, else sign-in with a
 * notice that the address is verified.
 */
export const VERIFIED_CALLBACK = '/dashboard/?verified=1';

/** better-auth answers `{ data, error }`; an error's message, or words for its status. */
export function authErrorMessage(error: { message?: string; status?: number; statusText?: string } | null | undefined): string | null {
  if (!error) return null;
  if (error.message) return error.message;
  if (error.status === 429) return 'Too many attempts. Wait a minute and try again.';
  return error.statusText ? `Sign-in failed: ${error.statusText}.` : 'Sign-in failed. Try again.';
}

type AuthResult<T> = { data: T | null; error: { message?: string; status?: number; statusText?: string } | null };

/** A better-auth call that also answers `{ error }` when it throws (the CSRF token or the network failed before it was sent). */
export async function settle<T>(call: Promise<AuthResult<T>>): Promise<AuthResult<T>> {
  try {
    return await call;
  } catch (failure) {
    return { data: null, error: { message: errorMessage(failure) } };
  }
}
