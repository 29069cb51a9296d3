export type { NormalizedAttachment, NormalizedEmail, SendLimits, Validated } from './validation.types';
export { validateSendRequest } from './send-request.validator';
export { parseBatchValidationMode, validateBatchRequest, type BatchValidationMode } from './batch-request.validator';
export { updateEmailBody, validateListQuery, validateUpdateEmailRequest, type ListQuery } from './email-query.validator';
export { batchRequestSchema, sendEmailSchema, type SendContext } from './send-request.schema';
export { parseScheduledAt } from './scheduled-at.parser';
export { requestHash } from './request-hash';
