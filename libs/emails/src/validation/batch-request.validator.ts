import { HeraldError } from '@herald/core';
import { validateEmail } from './send-request.validator';
import { accept, reject, type NormalizedEmail, type SendLimits, type Validated } from './validation.types';

export type BatchValidationMode = 'strict' | 'permissive';

/**
 * POST /emails/batch. Only the envelope (an array of 1..maxBatchSize emails) fails the whole
 * request here; each email gets its own result, in input order, so the caller can apply the
 * `x-batch-validation` mode (strict: first failure wins; permissive: report `{index, message}`).
 */
export function validateBatchRequest(
  body: unknown,
  limits: SendLimits,
  now: Date = new Date(),
): Validated<{ results: Validated<NormalizedEmail>[] }> {
  if (!Array.isArray(body)) return invalid('The request body must be an array of emails.');
  if (body.length === 0) return invalid('The request body must contain at least one email.');
  if (body.length > limits.maxBatchSize) {
    return invalid(`The request body must not contain more than ${limits.maxBatchSize} emails (it has ${body.length}).`);
  }
  return accept({ results: body.map((item: unknown) => validateEmail(item, limits, now, 'batch')) });
}

/**
 * The `x-batch-validation` header. resend@6 always sends it; older clients never do, hence the
 * strict default. Matching is case-insensitive because header values are often hand-typed.
 */
export function parseBatchValidationMode(header: string | undefined): Validated<BatchValidationMode> {
  const value = header?.trim().toLowerCase() ?? '';
  if (value === '' || value === 'strict') return accept('strict');
  if (value === 'permissive') return accept('permissive');
  return invalid('Invalid `x-batch-validation` header. It must be `strict` or `permissive`.');
}

const invalid = (message: string): Validated<never> => reject(new HeraldError('validation_error', message));
