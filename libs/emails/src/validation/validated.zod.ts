import { z } from 'zod';
import { fail, heraldErrorOf } from '@herald/http';
import { accept, reject, type Validated } from './validation.types';

/*
 * The send validators answer Validated values (a batch collects one per email) rather than
 * throwing; these adapt the shared zod-issue mapping of @herald/http to that shape.
 */

/** Unwraps a sub-validation inside a transform, forwarding its failure unchanged. */
export function relay<T>(ctx: z.RefinementCtx, result: Validated<T>): T {
  return result.ok ? result.value : fail(ctx, result.error.message, result.error.code);
}

export function fromZod<T>(result: z.ZodSafeParseResult<T>): Validated<T> {
  return result.success ? accept(result.data) : reject(heraldErrorOf(result.error));
}
