import { HeraldConfig } from '@herald/config';
import type { SendLimits } from './validation';

export const sendLimitsOf = (config: HeraldConfig): SendLimits => ({
  maxRecipients: config.MAX_RECIPIENTS,
  maxEmailBytes: config.MAX_EMAIL_BYTES,
  maxBatchSize: config.MAX_BATCH_SIZE,
  maxScheduleDays: config.MAX_SCHEDULE_DAYS,
});
