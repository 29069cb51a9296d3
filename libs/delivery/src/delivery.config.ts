import { configSlice, HeraldConfig, SliceOf } from '@herald/config';

/** What the sender pipeline and late reports read of the configuration. */
export const DELIVERY_CONFIG = configSlice('delivery', [
  'HERALD_REGION',
  'MAIL_DOMAIN',
  'DELIVERY_HOSTNAME',
  'DELIVERY_PORT',
  'DELIVERY_CLAIM_SECONDS',
  'DELIVERY_RETRY_SCHEDULE',
  'DELIVERY_EXPIRY_SECONDS',
  'DELIVERY_CONNECTIONS_PER_DESTINATION',
  'DELIVERY_MESSAGES_PER_CONNECTION',
  'DELIVERY_QUEUE_PER_DESTINATION',
  'DELIVERY_QUEUE_PER_WORKER',
  'DELIVERY_QUEUE_BYTES_PER_WORKER',
  'DELIVERY_CONNECT_TIMEOUT_MS',
  'DELIVERY_GREETING_TIMEOUT_MS',
  'DELIVERY_COMMAND_TIMEOUT_MS',
  'DELIVERY_BACKOFF_AFTER_FAILURES',
  'DELIVERY_BACKOFF_INITIAL_MS',
  'DELIVERY_BACKOFF_MAX_MS',
  'DNS_SERVERS',
  'DNS_TIMEOUT_MS',
  'DOMAIN_CACHE_MS',
  'DKIM_ENCRYPTION_KEY',
  'MAX_EMAIL_BYTES',
  'ATTACHMENT_ALLOWED_ADDRESSES',
  'TEST_ADDRESS_DOMAINS',
]);
export type DeliveryConfig = SliceOf<typeof DELIVERY_CONFIG>;

/** The EHLO name of this region's senders (the bounce MX answers with it too). */
export const deliveryHostname = (config: Pick<HeraldConfig, 'DELIVERY_HOSTNAME' | 'HERALD_REGION' | 'MAIL_DOMAIN'>): string =>
  config.DELIVERY_HOSTNAME ?? `mta.${config.HERALD_REGION}.${config.MAIL_DOMAIN}`;
