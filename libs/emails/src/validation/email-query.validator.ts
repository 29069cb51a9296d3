import { HeraldError } from '@herald/core';
import { isAbsent, isPlainObject, pageQuerySchema, type PageRequest } from '@herald/http';
import { parseScheduledAt } from './scheduled-at.parser';
import { accept, reject, type SendLimits, type Validated } from './validation.types';
import { fromZod } from './validated.zod';

/** PATCH /emails/:id: only `scheduled_at` can change; other fields are ignored, as on send. */
export function validateUpdateEmailRequest(
  body: unknown,
  limits: SendLimits,
  now: Date = new Date(),
): Validated<{ scheduledAt: Date }> {
  if (!isPlainObject(body)) return reject(new HeraldError('validation_error', 'The request body must be a JSON object.'));
  if (isAbsent(body['scheduled_at'])) {
    return reject(new HeraldError('missing_required_field', 'Missing `scheduled_at` field.'));
  }
  const scheduledAt = parseScheduledAt(body['scheduled_at'], now, limits.maxScheduleDays);
  return scheduledAt.ok ? accept({ scheduledAt: scheduledAt.value }) : scheduledAt;
}

/** GET /emails: `limit` 1–100 (default 20), and at most one of `after` / `before`. */
export type ListQuery = PageRequest;

const listQuerySchema = pageQuerySchema();

export function validateListQuery(query: unknown): Validated<ListQuery> {
  // Never null: the limit is not optional on this list.
  return fromZod(listQuerySchema.safeParse(query)) as Validated<ListQuery>;
}
