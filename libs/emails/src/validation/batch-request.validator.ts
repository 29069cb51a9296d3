import { z } from 'zod';
import { batchRequestSchema } from './send-request.schema';
import { validateEmail } from './send-request.validator';
import { accept, reject, type NormalizedEmail, type SendLimits, type Validated } from './validation.types';
import { HeraldError, heraldClock } from '@herald/core';
import { fromZod } from './validated.zod';

export type BatchValidationMode = 'strict' | 'permissive';

const envelopes = new WeakMap<SendLimits, ReturnType<typeof batchRequestSchema<z.ZodUnknown>>>();

/**
 * POST /emails/batch. Only the envelope (an array of 1..maxBatchSize emails) fails the whole
 * request here; each email gets its own result, in input order, so the caller can apply the
 * `x-batch-validation` mode (strict: first failure wins; permissive: report `{index, message}`).
 */
export function validateBatchRequest(
  body: unknown,
  limits: SendLimits,
  now: Date = heraldClock.now(),
): Validated<{ results: Validated<NormalizedEmail>[] }> {
  let envelope = envelopes.get(limits);
  if (!envelope) envelopes.set(limits, (envelope = batchRequestSchema(limits, z.unknown())));
  const items = fromZod(envelope.safeParse(body));
  if (!items.ok) return items;
  return accept({ results: items.value.map((item: unknown) => validateEmail(item, limits, now, 'batch')) });
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
