import { configSlice, SliceOf } from '@herald/config';

/** What @herald/domains reads of the configuration: regions and mail hosts, DKIM key encryption, verification. */
export const DOMAINS_CONFIG = configSlice('domains', [
  'NODE_ENV',
  'HERALD_REGIONS',
  'MAIL_DOMAIN',
  'REGION_BOUNCE_HOSTS',
  'REGION_SPF',
  'DKIM_ENCRYPTION_KEY',
  'DOMAIN_CACHE_MS',
  'DNS_SERVERS',
  'DNS_TIMEOUT_MS',
  'DOMAIN_VERIFY_WINDOW_HOURS',
  'DOMAIN_RECHECK_INTERVAL_MS',
]);
export type DomainsConfig = SliceOf<typeof DOMAINS_CONFIG>;
