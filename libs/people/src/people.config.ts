import { configSlice, SliceOf } from '@herald/config';

/** What @herald/people reads of the configuration: sign-in, sessions, providers, and where links point. */
export const PEOPLE_CONFIG = configSlice('people', [
  'NODE_ENV',
  'LOG_LEVEL',
  'HERALD_REGIONS',
  'MAIL_DOMAIN',
  'DATABASE_URL',
  'CONTROL_DATABASE_URL',
  'DATABASE_SCHEMA',
  'AUTH_SECRET',
  'DASHBOARD_URL',
  'PUBLIC_API_URL',
  'SESSION_TTL_SECONDS',
  'SIGN_IN_FAILURES_PER_MINUTE',
  'SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE',
  'GOOGLE_CLIENT_ID',
  'GOOGLE_CLIENT_SECRET',
  'GOOGLE_DISCOVERY_URL',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
  'GITHUB_AUTHORIZE_URL',
  'GITHUB_TOKEN_URL',
  'GITHUB_API_URL',
]);
export type PeopleConfig = SliceOf<typeof PEOPLE_CONFIG>;

/** Dashboard cookies carry `Secure` everywhere but on a developer's machine (plain http://127.0.0.1). */
export const secureCookies = (config: Pick<PeopleConfig, 'NODE_ENV'>): boolean => config.NODE_ENV !== 'development';

/** Only for development and test runs that set no AUTH_SECRET (config requires one in production). */
export const DEVELOPMENT_AUTH_SECRET = 'herald-development-secret-not-for-production-use';
