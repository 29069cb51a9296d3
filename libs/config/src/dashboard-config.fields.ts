import { z } from 'zod';
import { int, url } from './config-fields';

/** The dashboard's sign-in settings: sessions, rate limits and the social providers (part of configSchema). */
export const dashboardFields = {
  /** Signs dashboard session cookies and tokens (better-auth); 32+ characters; required in production. */
  AUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** The dashboard's public origin for links in emails and OAuth redirects; default PUBLIC_API_URL, else the API's own URL. */
  DASHBOARD_URL: url(['http:', 'https:']).optional(),
  /** A dashboard session lasts this long without use (seconds). */
  SESSION_TTL_SECONDS: int(300, 365 * 86400).default(7 * 86400),
  /** Wrong passwords allowed per account, and sign-in attempts per client address, within a minute; more get 429. */
  SIGN_IN_FAILURES_PER_MINUTE: int(1, 10_000).default(10),
  SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE: int(1, 100_000).default(30),
  /** Google (OpenID Connect); sign-in with Google is offered when the client id is set. */
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  GOOGLE_DISCOVERY_URL: url(['http:', 'https:']).default('https://accounts.google.com/.well-known/openid-configuration'),
  /** GitHub (OAuth 2 and its user API); offered when the client id is set. */
  GITHUB_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  GITHUB_AUTHORIZE_URL: url(['http:', 'https:']).default('https://github.com/login/oauth/authorize'),
  GITHUB_TOKEN_URL: url(['http:', 'https:']).default('https://github.com/login/oauth/access_token'),
  GITHUB_API_URL: url(['http:', 'https:']).default('https://api.github.com'),
};
