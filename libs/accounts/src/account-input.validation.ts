import { HeraldError, isUuid } from '@herald/core';

/**
 * Checks a required display name the way Resend reports it: absent or blank is
 * `missing_required_field`, anything else wrong is `validation_error`. Length counts characters
 * (code points), as the database's `length()` check does.
 */
export function requiredName(value: unknown, maxLength: number, field = 'name'): string {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw new HeraldError('missing_required_field', `Missing \`${field}\` field.`);
  }
  if (typeof value !== 'string') {
    throw new HeraldError('validation_error', `The \`${field}\` field must be a string.`);
  }
  if ([...value].length > maxLength) {
    throw new HeraldError('validation_error', `The \`${field}\` field must be at most ${maxLength} characters.`);
  }
  return value;
}

/** Ids in paths are UUIDs; anything else never reaches Postgres (which would reject the cast). */
export function requireUuidParam(value: string, field = 'id'): string {
  if (!isUuid(value)) throw new HeraldError('invalid_parameter', `The \`${field}\` must be a valid UUID.`);
  return value;
}
