import { HeraldError } from '@herald/core';
import { validateIdempotencyKey } from './idempotency-key.validator';

function errorOf(fn: () => unknown): HeraldError {
  try {
    fn();
  } catch (e) {
    if (e instanceof HeraldError) return e;
    throw e;
  }
  throw new Error('expected a HeraldError');
}

describe('validateIdempotencyKey', () => {
  it('treats an absent header as no idempotency', () => {
    expect(validateIdempotencyKey(undefined)).toBeNull();
  });

  it('accepts 1 and 256 characters, any content', () => {
    expect(validateIdempotencyKey('a')).toBe('a');
    expect(validateIdempotencyKey('x'.repeat(256))).toBe('x'.repeat(256));
    expect(validateIdempotencyKey('welcome-user/123:ä')).toBe('welcome-user/123:ä');
  });

  it('rejects 0 and 257 characters with Resend’s error', () => {
    for (const raw of ['', 'x'.repeat(257)]) {
      const error = errorOf(() => validateIdempotencyKey(raw));
      expect(error.code).toBe('invalid_idempotency_key');
      expect(error.message).toBe('The key must be between 1-256 chars.');
    }
  });

  it('accepts a repeated header only when every value is the same', () => {
    expect(validateIdempotencyKey(['k', 'k'])).toBe('k');
    expect(errorOf(() => validateIdempotencyKey(['k', 'other'])).code).toBe('invalid_idempotency_key');
    expect(errorOf(() => validateIdempotencyKey([])).code).toBe('invalid_idempotency_key');
  });
});
