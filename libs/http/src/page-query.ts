import { z } from 'zod';
import { isUuid } from '@herald/core';
import { fail, isPlainObject, parseOrThrow } from './zod-issue.mapper';

/*
 * The one parser of `limit`, `after` and `before` for every keyset-paged list. Query strings
 * arrive as strings (arrays when a key repeats); numbers come from callers that parsed them
 * already. The documented shapes below are what /openapi.json declares for these parameters.
 */

export const PAGE_DEFAULT_LIMIT = 20;
export const PAGE_MAX_LIMIT = 100;
export const PAGE_LIMIT_MESSAGE = `The pagination limit must be a number between 1 and ${PAGE_MAX_LIMIT}.`;

/** What a list takes: `limit`, and at most one of `after` / `before`. */
export interface PageRequest {
  limit: number;
  after: string | null;
  before: string | null;
}

/** How a list's cursors read; resource lists page by UUID, lowercased. */
export interface CursorKind {
  valid(value: string): boolean;
  /** Completes "The `after` parameter must be …". */
  described: string;
  normalize(value: string): string;
}

export const UUID_CURSOR: CursorKind = { valid: isUuid, described: 'a valid UUID', normalize: (v) => v.toLowerCase() };

export interface PageOptions {
  /** Without `limit` or a cursor the whole list is wanted, and the parser answers null (Resend's older list endpoints). */
  limitOptional?: boolean;
  /** `limit=` (blank) reads as no limit instead of a bad one; the lists that said so before the parsers were one keep it. */
  blankLimitIsDefault?: boolean;
  cursor?: CursorKind;
  /** Only `after`: an append-only log pages one way (`before` is refused). */
  forwardOnly?: boolean;
}

/** The documented shapes of the parameters (see ApiPageQuery in apps/api). */
export const PAGE_LIMIT = z.int().min(1).max(PAGE_MAX_LIMIT);
export const PAGE_CURSOR = z.string().meta({ format: 'uuid' });

const limitSchema = (blankIsDefault: boolean) => {
  const limit = z
    .union([z.number(), z.string().trim().regex(/^\d+$/).transform(Number)], { error: PAGE_LIMIT_MESSAGE })
    .pipe(z.number().int({ error: PAGE_LIMIT_MESSAGE }).min(1, { error: PAGE_LIMIT_MESSAGE }).max(PAGE_MAX_LIMIT, { error: PAGE_LIMIT_MESSAGE }))
    .optional();
  return blankIsDefault ? z.preprocess((value) => (value === '' ? undefined : value), limit) : limit;
};

const cursorSchema = (name: 'after' | 'before', kind: CursorKind) =>
  z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === null || value === '') return null;
      if (typeof value === 'string' && kind.valid(value)) return kind.normalize(value);
      return fail(ctx, `The \`${name}\` parameter must be ${kind.described}.`, 'invalid_parameter');
    });

const refusedBefore = z
  .unknown()
  .optional()
  .transform((value, ctx): null => {
    if (value === undefined || value === '') return null;
    return fail(ctx, 'The `before` parameter is not supported here; page with `after`.');
  });

/** The zod schema of a page query; `parsePage` is the usual way in. */
export function pageQuerySchema(options: PageOptions = {}) {
  const kind = options.cursor ?? UUID_CURSOR;
  const limit = limitSchema(options.blankLimitIsDefault ?? false);
  // Key order is check order: the first problem is the one reported.
  const shape = options.forwardOnly
    ? { limit, before: refusedBefore, after: cursorSchema('after', kind) }
    : { limit, after: cursorSchema('after', kind), before: cursorSchema('before', kind) };
  return z
    .preprocess((query) => (isPlainObject(query) ? query : {}), z.object(shape))
    .transform((query, ctx): PageRequest | null => {
      const { after, before } = query;
      if (after !== null && before !== null) return fail(ctx, 'The `after` and `before` parameters cannot be used together.');
      if (options.limitOptional && query.limit === undefined && after === null && before === null) return null;
      return { limit: query.limit ?? PAGE_DEFAULT_LIMIT, after, before };
    });
}

/** A page request from a query, or null for "the whole list" when `limitOptional`; throws the Resend-style HeraldError. */
export function parsePage(query: unknown, options: PageOptions & { limitOptional: true }): PageRequest | null;
export function parsePage(query: unknown, options?: PageOptions): PageRequest;
export function parsePage(query: unknown, options: PageOptions = {}): PageRequest | null {
  return parseOrThrow(pageQuerySchema(options), query);
}
