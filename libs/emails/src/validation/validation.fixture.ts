import type { SendLimits, Validated } from './validation.types';

/* Shared by the validation specs: Resend's default limits and a minimal valid email. */

export const LIMITS: SendLimits = {
  maxRecipients: 50,
  maxEmailBytes: 40 * 1024 * 1024,
  maxBatchSize: 100,
  maxScheduleDays: 30,
};

export const NOW = new Date('2026-08-05T10:00:00.000Z');

export const validEmail = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  from: 'Acme <hi@acme.com>',
  to: 'jane@example.com',
  subject: 'Hello',
  html: '<p>Hi</p>',
  ...overrides,
});

/** The failure as `{ code, message }`, or null when the result is a success. */
export function errorOf<T>(result: Validated<T>): { code: string; message: string } | null {
  return result.ok ? null : { code: result.error.code, message: result.error.message };
}

/** The value of a success; a failure throws with its message, so a spec shows what went wrong. */
export function valueOf<T>(result: Validated<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}
