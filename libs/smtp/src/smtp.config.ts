import { configSlice, SliceOf } from '@herald/config';

/** What @herald/smtp reads of the configuration: the relay, the bounce MX and the submission checks. */
export const SMTP_CONFIG = configSlice('smtp', [
  'NODE_ENV',
  'HERALD_REGION',
  'MAIL_DOMAIN',
  'SMTP_HOST',
  'SMTP_PORTS',
  'SMTP_HOSTNAME',
  'SMTP_TLS_CERT',
  'SMTP_TLS_KEY',
  'SMTP_IDLE_TIMEOUT_MS',
  'SMTP_SESSION_TIMEOUT_MS',
  'SMTP_MAX_CONNECTIONS',
  'SMTP_MAX_CONNECTIONS_PER_CLIENT',
  'BOUNCE_MX_HOST',
  'BOUNCE_MX_PORT',
  'DELIVERY_HOSTNAME',
  'DKIM_ENCRYPTION_KEY',
  'MAX_EMAIL_BYTES',
  'MAX_RECIPIENTS',
  'RATE_LIMIT_DEFAULT',
  'RATE_LIMIT_PLANS',
]);
export type SmtpConfig = SliceOf<typeof SMTP_CONFIG>;
