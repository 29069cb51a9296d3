import { z } from 'zod';
import { documentedAs, jsonBody, pageQuerySchema, type PageRequest, required } from '@herald/http';
import { parseScheduledAt } from './scheduled-at.parser';
import { accept, type SendLimits, type Validated } from './validation.types';
import { fromZod, relay } from './validated.zod';
import { heraldClock } from '@herald/core';

/** The body of PATCH /emails/:id: only `scheduled_at` can change; other fields are ignored, as on send. */
export const updateEmailBody = (limits: SendLimits, now: Date) =>
  jsonBody(
    z.object({
      scheduled_at: required(
        documentedAs(z.unknown(), z.string())
          .meta({ description: 'The new time, in the forms `scheduled_at` accepts on send.', example: 'in 2 hours' })
          .transform((value, ctx) => relay(ctx, parseScheduledAt(value, now, limits.maxScheduleDays))),
        'Missing `scheduled_at` field.',
      ),
    }),
  ).meta({ example: { scheduled_at: 'in 2 hours' } });

export function validateUpdateEmailRequest(body: unknown, limits: SendLimits, now: Date = heraldClock.now()): Validated<{ scheduledAt: Date }> {
  const parsed = fromZod(updateEmailBody(limits, now).safeParse(body));
  return parsed.ok ? accept({ scheduledAt: parsed.value.scheduled_at }) : parsed;
}

/** GET /emails: `limit` 1–100 (default 20), and at most one of `after` / `before`. */
export type ListQuery = PageRequest;

const listQuerySchema = pageQuerySchema();

export function validateListQuery(query: unknown): Validated<ListQuery> {
  // Never null: the limit is not optional on this list.
  return fromZod(listQuerySchema.safeParse(query)) as Validated<ListQuery>;
}
