import { HeraldError } from '@herald/core';

/** Resend's bounds for `Idempotency-Key` (and the SMTP `*-Idempotency-Key` headers). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 256;

const INVALID_KEY_MESSAGE = 'The key must be between 1-256 chars.';

/**
 * Reads an idempotency key from a header value. Absent means "no idempotency" (null); anything
 * present must be 1–256 characters, and an empty value is an error rather than "absent" so that
 * a client whose key variable is accidentally empty learns about it instead of silently sending
 * twice. A header repeated with different values is ambiguous, so it is rejected too.
 */
export function validateIdempotencyKey(raw: string | string[] | undefined): string | null {
  if (raw === undefined) return null;
  const values = Array.isArray(raw) ? [...new Set(raw)] : [raw];
  const key = values.length === 1 ? values[0] : undefined;
  if (key === undefined || key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new HeraldError('invalid_idempotency_key', INVALID_KEY_MESSAGE);
  }
  return key;
}
