import type { PeopleConfig } from './people.config';

/** A GitHub `/user/emails` entry. */
export interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/**
 * The address a GitHub account signs in with: its primary address if GitHub has verified it,
 * else another verified one; none when GitHub has verified none (sign-in is then refused with
 * `error=email_not_found`: an unverified address could belong to someone else's Herald account).
 */
export function verifiedGithubEmail(emails: readonly GithubEmail[]): string | null {
  const verified = emails.filter((e) => e.verified);
  return (verified.find((e) => e.primary) ?? verified[0])?.email.toLowerCase() ?? null;
}

/** The sign-in providers Herald knows, by better-auth's provider id. */
export const SIGN_IN_PROVIDERS = ['google', 'github'] as const;
export type SignInProvider = (typeof SIGN_IN_PROVIDERS)[number];

/** The providers this deployment offers: those with a client id (`oauthProviders` registers the same). */
export function configuredProviders(config: Pick<PeopleConfig, 'GOOGLE_CLIENT_ID' | 'GITHUB_CLIENT_ID'>): SignInProvider[] {
  return SIGN_IN_PROVIDERS.filter((provider) => Boolean(provider === 'google' ? config.GOOGLE_CLIENT_ID : config.GITHUB_CLIENT_ID));
}

interface Tokens {
  accessToken?: string;
}

/**
 * Google (OpenID Connect: discovery, ID tokens checked against its JWKS) and GitHub (OAuth 2 and
 * its REST API) through better-auth's generic OAuth plugin, so every endpoint comes from the
 * configuration (the real providers by default, local stand-ins in tests). Their ids are
 * `google` and `github`, so `/sign-in/social` and `/callback/:id` serve them.
 */
export function oauthProviders(config: PeopleConfig, fetchJson: (url: string, token: string) => Promise<unknown>) {
  const providers = [];
  if (config.GOOGLE_CLIENT_ID) {
    providers.push({
      providerId: 'google',
      name: 'Google',
      clientId: config.GOOGLE_CLIENT_ID,
      clientSecret: config.GOOGLE_CLIENT_SECRET,
      discoveryUrl: config.GOOGLE_DISCOVERY_URL,
      requireIdTokenVerification: true,
      scopes: ['openid', 'email', 'profile'],
    });
  }
  if (config.GITHUB_CLIENT_ID) {
    const api = config.GITHUB_API_URL.replace(/\/+$/, '');
    providers.push({
      providerId: 'github',
      name: 'GitHub',
      clientId: config.GITHUB_CLIENT_ID,
      clientSecret: config.GITHUB_CLIENT_SECRET,
      authorizationUrl: config.GITHUB_AUTHORIZE_URL,
      tokenUrl: config.GITHUB_TOKEN_URL,
      scopes: ['read:user', 'user:email'],
      accountSubject: ({ profile }: { profile: Record<string, unknown> }) => String(profile['id']),
      getUserInfo: async (tokens: Tokens) => {
        if (!tokens.accessToken) return null;
        const profile = (await fetchJson(`${api}/user`, tokens.accessToken)) as { id: number; login: string; name?: string; avatar_url?: string };
        const emails = (await fetchJson(`${api}/user/emails`, tokens.accessToken)) as GithubEmail[];
        const email = verifiedGithubEmail(Array.isArray(emails) ? emails : []);
        return {
          id: String(profile.id),
          name: profile.name || profile.login,
          image: profile.avatar_url,
          // No verified address: better-auth refuses the sign-in with `error=email_not_found`.
          email: email ?? undefined,
          emailVerified: email !== null,
        };
      },
    });
  }
  return providers;
}

/** GitHub's API wants a User-Agent; a non-2xx answer fails the sign-in. */
export async function githubFetchJson(url: string, token: string): Promise<unknown> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json', 'user-agent': 'Herald' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}
