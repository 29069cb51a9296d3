import { HeraldError, isUuid } from '@herald/core';
import { parseAddress } from '@herald/core';
import { parsePage } from '@herald/http';
import { SUPPRESSION_ORIGINS, type SuppressionOrigin, type SuppressionPage } from './suppression.types';

/*
 * The bodies and queries of /suppressions, checked the way Resend reports problems: one at a
 * time, `missing_required_field` for an absent field, `validation_error` (422) otherwise, naming
 * the field. Unknown fields are ignored.
 */

export const MAX_SUPPRESSION_BATCH = 100;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const invalid = (message: string) => new HeraldError('validation_error', message);
const missing = (field: string) => new HeraldError('missing_required_field', `The \`${field}\` field is required.`);

/**
 * A recipient address as the list keys it: the bare address (a `Name <addr>` form is accepted
 * and reduced to its address), lowercased whole. Null when it is not an address.
 */
export function normalizeSuppressedAddress(value: string): string | null {
  const parsed = parseAddress(value);
  return parsed ? parsed.address.toLowerCase() : null;
}

function address(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(`The \`${field}\` field must be a string.`);
  const email = normalizeSuppressedAddress(value);
  if (!email) throw invalid(`Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` format.`);
  return email;
}

function body(value: unknown): Record<string, unknown> {
  if (!isPlainObject(value)) throw invalid('The request body must be a JSON object.');
  return value;
}

/** POST /suppressions `{email}`. */
export function validateAddSuppression(input: unknown): string {
  const b = body(input);
  if (b['email'] === undefined || b['email'] === null) throw missing('email');
  return address(b['email'], 'email');
}

function list(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(`The \`${field}\` field must be an array.`);
  if (value.length === 0) throw invalid(`The \`${field}\` field must contain at least 1 item.`);
  if (value.length > MAX_SUPPRESSION_BATCH) throw invalid(`The \`${field}\` field must contain at most ${MAX_SUPPRESSION_BATCH} items.`);
  return value;
}

const unique = <T>(values: T[]): T[] => [...new Set(values)];

/** POST /suppressions/batch/add `{emails}`: 1–100 addresses, duplicates counted once. */
export function validateBatchAdd(input: unknown): string[] {
  const b = body(input);
  if (b['emails'] === undefined || b['emails'] === null) throw missing('emails');
  return unique(list(b['emails'], 'emails').map((e, i) => address(e, `emails[${i}]`)));
}

/** POST /suppressions/batch/remove `{emails}` or `{ids}`, not both. */
export function validateBatchRemove(input: unknown): { emails: string[] } | { ids: string[] } {
  const b = body(input);
  const hasEmails = b['emails'] !== undefined && b['emails'] !== null;
  const hasIds = b['ids'] !== undefined && b['ids'] !== null;
  if (hasEmails && hasIds) throw invalid('The `emails` and `ids` fields cannot be used together.');
  if (hasEmails) return { emails: unique(list(b['emails'], 'emails').map((e, i) => address(e, `emails[${i}]`))) };
  if (!hasIds) throw new HeraldError('missing_required_field', 'Either the `emails` or the `ids` field is required.');
  return {
    ids: unique(
      list(b['ids'], 'ids').map((id, i) => {
        if (typeof id !== 'string' || !isUuid(id)) throw invalid(`The \`ids[${i}]\` field must be a valid UUID.`);
        return id.toLowerCase();
      }),
    ),
  };
}

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
