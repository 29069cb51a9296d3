import { z } from 'zod';
import { HeraldError, isUuid } from '@herald/core';
import { parseScheduledAt } from './scheduled-at.parser';
import { accept, reject, type SendLimits, type Validated } from './validation.types';
import { fail, fromZod, isAbsent, isPlainObject } from './zod-issue.mapper';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const LIMIT_MESSAGE = `The pagination limit must be a number between 1 and ${MAX_LIMIT}.`;

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

// Query strings arrive as strings (or arrays when a key repeats); numbers come from callers
// that parsed them already.
const limitSchema = z
  .union([z.number(), z.string().trim().regex(/^\d+$/).transform(Number)], { error: LIMIT_MESSAGE })
  .pipe(
    z
      .number({ error: LIMIT_MESSAGE })
      .int({ error: LIMIT_MESSAGE })
      .min(1, { error: LIMIT_MESSAGE })
      .max(MAX_LIMIT, { error: LIMIT_MESSAGE }),
  )
  .optional();

/** A cursor is the id of an email (a UUID); an empty value means no cursor. */
const cursorSchema = (name: 'after' | 'before') =>
  z.unknown().optional().transform((value, ctx) => {
    if (isAbsent(value) || value === '') return null;
    if (typeof value === 'string' && isUuid(value)) return value.toLowerCase();
    return fail(ctx, `The \`${name}\` parameter must be a valid UUID.`, 'invalid_parameter');
  });

const listQuerySchema = z
  .object(
    { limit: limitSchema, after: cursorSchema('after'), before: cursorSchema('before') },
    { error: 'The query parameters must be `limit`, `after` or `before` values.' },
  )
  .transform((query, ctx) => {
    if (query.after !== null && query.before !== null) {
      return fail(ctx, 'The `after` and `before` parameters cannot be used together.');
    }
    return { limit: query.limit ?? DEFAULT_LIMIT, after: query.after, before: query.before };
  });

/** GET /emails: `limit` 1–100 (default 20), and at most one of `after` / `before`. */
export interface ListQuery {
  limit: number;
  after: string | null;
  before: string | null;
}

export function validateListQuery(query: unknown): Validated<ListQuery> {
  return fromZod(listQuerySchema.safeParse(isAbsent(query) ? {} : query));
}
