import { z } from 'zod';
import { HeraldError } from '@herald/core';

/**
 * Validates a message payload at the bus boundary (before publishing, and in a consumer's
 * handler). A failure is a HeraldError('validation_error'): the JetStream transport terminates
 * such a message instead of redelivering it, since no retry can make it valid.
 */
export function parsePayload<T>(schema: z.ZodType<T>, payload: unknown, what: string): T {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new HeraldError('validation_error', `invalid ${what}: ${problems}`);
}
