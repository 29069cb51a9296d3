import { z } from 'zod';
import { HeraldError, isUuid } from '@herald/core';
import type { DomainPage } from './domains.repository';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const LIMIT_MESSAGE = `The pagination limit must be a number between 1 and ${MAX_LIMIT}.`;

// Query strings arrive as strings (or arrays when a key repeats).
const limit = z
  .union([z.number(), z.string().trim().regex(/^\d+$/).transform(Number)], { error: LIMIT_MESSAGE })
  .pipe(z.number().int().min(1, { error: LIMIT_MESSAGE }).max(MAX_LIMIT, { error: LIMIT_MESSAGE }))
  .optional();

const cursor = (name: 'after' | 'before') =>
  z.unknown().optional().transform((value, ctx) => {
    if (value === undefined || value === null || value === '') return null;
    if (typeof value === 'string' && isUuid(value)) return value.toLowerCase();
    const message = `The \`${name}\` parameter must be a valid UUID.`;
    ctx.addIssue({ code: 'custom', message, params: { heraldCode: 'invalid_parameter' } });
    return z.NEVER;
  });

const querySchema = z.object({ limit, after: cursor('after'), before: cursor('before') });

/**
 * GET /domains. As at Resend, pagination is optional on this older list endpoint: without
 * `limit` or a cursor, every domain in one response (null); otherwise 1–100 per page (20 by
 * default) and at most one of `after` / `before`, ids of domains.
 */
export function validateDomainListQuery(query: unknown): DomainPage | null {
  const parsed = querySchema.safeParse(typeof query === 'object' && query !== null ? query : {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const badCursor = issue?.code === 'custom' && issue.params?.['heraldCode'] === 'invalid_parameter';
    const code = badCursor ? 'invalid_parameter' : 'validation_error';
    throw new HeraldError(code, issue?.message ?? LIMIT_MESSAGE);
  }
  const { after, before } = parsed.data;
  if (after !== null && before !== null) {
    throw new HeraldError('validation_error', 'The `after` and `before` parameters cannot be used together.');
  }
  if (parsed.data.limit === undefined && after === null && before === null) return null;
  return { limit: parsed.data.limit ?? DEFAULT_LIMIT, after, before };
}
