import { configSlice, SliceOf } from '@herald/config';
import type { SendLimits } from './validation';

/** What accepting and reading emails reads of the configuration. */
export const EMAILS_CONFIG = configSlice('emails', ['MAX_RECIPIENTS', 'MAX_EMAIL_BYTES', 'MAX_BATCH_SIZE', 'MAX_SCHEDULE_DAYS', 'DISPATCH_WAIT_MS']);
export type EmailsConfig = SliceOf<typeof EMAILS_CONFIG>;

export const sendLimitsOf = (
  config: Pick<EmailsConfig, 'MAX_RECIPIENTS' | 'MAX_EMAIL_BYTES' | 'MAX_BATCH_SIZE' | 'MAX_SCHEDULE_DAYS'>,
): SendLimits => ({
  maxRecipients: config.MAX_RECIPIENTS,
  maxEmailBytes: config.MAX_EMAIL_BYTES,
  maxBatchSize: config.MAX_BATCH_SIZE,
  maxScheduleDays: config.MAX_SCHEDULE_DAYS,
});
