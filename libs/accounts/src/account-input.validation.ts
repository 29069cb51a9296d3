import { z } from 'zod';
import { HeraldError, isUuid } from '@herald/core';
import { checkedFirst, fail, isAbsent, parseOrThrow } from '@herald/http';

/**
 * A required display name as Resend reports it: absent or blank is `missing_required_field`,
 * anything else wrong is `validation_error`. Length counts characters (code points), as the
 * database's `length()` check does.
 */
export const nameSchema = (maxLength: number, field = 'name') =>
  checkedFirst(
    (value, ctx) => {
      if (isAbsent(value) || (typeof value === 'string' && value.trim() === '')) fail(ctx, `Missing \`${field}\` field.`, 'missing_required_field');
    },
    z
      .string({ error: `The \`${field}\` field must be a string.` })
      .refine((value) => [...value].length <= maxLength, { error: `The \`${field}\` field must be at most ${maxLength} characters.` })
      // JSON Schema counts characters as code points too.
      .meta({ minLength: 1, maxLength }),
  );

export function requiredName(value: unknown, maxLength: number, field = 'name'): string {
  return parseOrThrow(nameSchema(maxLength, field), value);
}

/** Ids in paths are UUIDs; anything else never reaches Postgres (which would reject the cast). */
export function requireUuidParam(value: string, field = 'id'): string {
  if (!isUuid(value)) throw new HeraldError('invalid_parameter', `The \`${field}\` must be a valid UUID.`);
  return value;
}
