import { z } from 'zod';
import { HeraldError, isUuid, parseAddress } from '@herald/core';
import {
  checkedFirst,
  fail,
  fieldName,
  isAbsent,
  isPlainObject,
  jsonBody,
  listOf,
  mustBe,
  optional,
  parseOrThrow,
  parsePage,
  required,
  typeError,
} from '@herald/http';
import { SUPPRESSION_ORIGINS, type SuppressionOrigin, type SuppressionPage } from './suppression.types';

/*
 * The bodies and queries of /suppressions, checked the way Resend reports problems: one at a
 * time, `missing_required_field` for an absent field, `validation_error` (422) otherwise, naming
 * the field. Unknown fields are ignored.
 */

export const MAX_SUPPRESSION_BATCH = 100;

const invalid = (message: string) => new HeraldError('validation_error', message);
const missingField = (field: string) => `The \`${field}\` field is required.`;
const invalidSuppressedAddress = (field: string) => `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` format.`;

/**
 * A recipient address as the list keys it: the bare address (a `Name <addr>` form is accepted
 * and reduced to its address), lowercased whole. Null when it is not an address.
 */
export function normalizeSuppressedAddress(value: string): string | null {
  const parsed = parseAddress(value);
  return parsed ? parsed.address.toLowerCase() : null;
}

/** An address field: a string that parses, reduced to the key the list uses. */
const address = z
  .string({ error: typeError('a string') })
  .refine((value) => normalizeSuppressedAddress(value) !== null, { error: (issue) => invalidSuppressedAddress(fieldName(issue.path ?? [])) })
  .transform((value) => normalizeSuppressedAddress(value) as string)
  .meta({ format: 'email', example: 'bounced@example.com' });

const unique = <T>(values: T[]): T[] => [...new Set(values)];

/** POST /suppressions `{email}`. */
export const addSuppressionBody = jsonBody(z.object({ email: required(address, missingField('email')) }));

const emails = listOf('emails', address, MAX_SUPPRESSION_BATCH).transform(unique);

/** POST /suppressions/batch/add `{emails}`: 1–100 addresses, duplicates counted once. */
export const batchAddSuppressionsBody = jsonBody(z.object({ emails: required(emails, missingField('emails')) }));

const ids = listOf(
  'ids',
  z
    .string({ error: (issue) => mustBe(fieldName(issue.path ?? []), 'a valid UUID') })
    .refine(isUuid, { error: (issue) => mustBe(fieldName(issue.path ?? []), 'a valid UUID') })
    .transform((id) => id.toLowerCase())
    .meta({ format: 'uuid' }),
  MAX_SUPPRESSION_BATCH,
).transform(unique);

/** POST /suppressions/batch/remove `{emails}` or `{ids}`, not both. */
export const batchRemoveSuppressionsBody = checkedFirst(
  (body, ctx) => {
    const given = (field: string) => isPlainObject(body) && !isAbsent(body[field]);
    if (!isPlainObject(body)) fail(ctx, 'The request body must be a JSON object.');
    else if (given('emails') && given('ids')) fail(ctx, 'The `emails` and `ids` fields cannot be used together.');
    else if (!given('emails') && !given('ids')) fail(ctx, 'Either the `emails` or the `ids` field is required.', 'missing_required_field');
  },
  z.object({ emails: optional(emails), ids: optional(ids) }),
)
  .transform((body): { emails: string[] } | { ids: string[] } => (body.emails ? { emails: body.emails } : { ids: body.ids ?? [] }))
  .meta({ description: 'Either `emails` or `ids`, not both.', example: { emails: ['bounced@example.com'] } });

export const validateAddSuppression = (input: unknown): string => parseOrThrow(addSuppressionBody, input).email;
export const validateBatchAdd = (input: unknown): string[] => parseOrThrow(batchAddSuppressionsBody, input).emails;
export const validateBatchRemove = (input: unknown) => parseOrThrow(batchRemoveSuppressionsBody, input);

/** GET /suppressions: `origin`, and a page (`limit` 1–100, 20 by default; `after` or `before`, suppression ids). */
export function validateSuppressionListQuery(input: unknown): SuppressionPage {
  const q = isPlainObject(input) ? input : {};
  // A repeated parameter arrives as an array: this list names it rather than calling it malformed.
  for (const name of ['limit', 'after', 'before', 'origin']) {
    const value = q[name];
    if (value !== undefined && value !== null && value !== '' && typeof value !== 'string') {
      throw new HeraldError('invalid_parameter', `The \`${name}\` parameter must be given once.`);
    }
  }
  const page = parsePage(q, { blankLimitIsDefault: true });
  const origin = q['origin'] || undefined;
  if (origin !== undefined && !(SUPPRESSION_ORIGINS as readonly unknown[]).includes(origin)) {
    throw invalid(`The \`origin\` parameter must be one of ${SUPPRESSION_ORIGINS.map((o) => `\`${o}\``).join(', ')}.`);
  }
  return { ...page, origin: (origin as SuppressionOrigin | undefined) ?? null };
}

/** The dashboard's list query: the REST one, plus `q`, a part of the address to look for (any case). */
export function validateSuppressionSearchQuery(input: unknown): SuppressionPage {
  const page = validateSuppressionListQuery(input);
  const q = isPlainObject(input) ? input['q'] : undefined;
  if (q === undefined || q === null || q === '') return page;
  if (typeof q !== 'string') throw new HeraldError('invalid_parameter', 'The `q` parameter must be given once.');
  const search = q.trim();
  if (search.length > 320) throw invalid('The `q` parameter must be at most 320 characters.');
  return search ? { ...page, search } : page;
}
