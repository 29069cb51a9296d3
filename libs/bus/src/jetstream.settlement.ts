import { HeraldError, HeraldErrorCode, isHeraldError } from '@herald/core';

/**
 * What the JetStream transport does with a message once its handler is done. This file is the
 * one place where handler outcomes become ack, nak or term.
 */
export type Settlement = { action: 'ack' } | { action: 'nak'; delayMs: number; reason: string } | { action: 'term'; reason: string };

/** Delay of a redelivery after a failure: doubling per delivery, from initialMs up to maxMs. */
export interface RetryPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialMs: 1000, maxMs: 60_000 };

export const ACK: Settlement = { action: 'ack' };

/** The payload is not JSON: no handler can ever accept it. */
export class PoisonMessageError extends Error {
  constructor(reason: string) {
    super(`payload is not JSON: ${reason}`);
    this.name = 'PoisonMessageError';
  }
}

export function decodePayload(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch (error) {
    throw new PoisonMessageError((error as Error).message);
  }
}

export function retryDelayMs(deliveryCount: number, retry: RetryPolicy): number {
  const doublings = Math.min(Math.max(deliveryCount - 1, 0), 30);
  return Math.min(retry.maxMs, retry.initialMs * 2 ** doublings);
}

/** Maps a handler failure. Retrying is the default: only a message that can never succeed is terminated. */
export function settlementForError(error: unknown, deliveryCount: number, retry: RetryPolicy): Settlement {
  if (error instanceof PoisonMessageError) return { action: 'term', reason: error.message };
  if (isHeraldError(error)) return settlementForHeraldError(error, deliveryCount, retry);
  return { action: 'nak', delayMs: retryDelayMs(deliveryCount, retry), reason: describe(error) };
}

function settlementForHeraldError(error: HeraldError, deliveryCount: number, retry: RetryPolicy): Settlement {
  const reason = `${error.code}: ${error.message}`;
  const code: HeraldErrorCode = error.code;
  switch (code) {
    // The message itself is wrong; redelivering it would fail the same way forever.
    case 'validation_error':
    case 'missing_required_field':
    case 'invalid_parameter':
    case 'invalid_attachment':
    case 'invalid_from_address':
    case 'invalid_region':
    case 'invalid_scheduled_at':
    case 'payload_too_large':
    case 'uri_too_long':
    case 'headers_too_large':
    case 'request_timeout':
    case 'malformed_request':
    case 'method_not_implemented':
      return { action: 'term', reason };
    // Limits say when to come back.
    case 'rate_limit_exceeded':
    case 'daily_quota_exceeded':
    case 'monthly_quota_exceeded': {
      const backoff = retryDelayMs(deliveryCount, retry);
      const delayMs = error.retryAfterSeconds !== undefined ? Math.max(error.retryAfterSeconds * 1000, backoff) : backoff;
      return { action: 'nak', delayMs, reason };
    }
    // Everything else may depend on state that changes (a row not yet visible, a dependency
    // down, a domain being verified): retry with backoff.
    case 'missing_api_key':
    case 'invalid_api_key':
    case 'restricted_api_key':
    case 'forbidden_from_domain':
    case 'quota_reached':
    case 'domain_paused':
    case 'invalid_access':
    case 'invalid_idempotency_key':
    case 'invalid_idempotent_request':
    case 'concurrent_idempotent_requests':
    case 'not_found':
    case 'method_not_allowed':
    case 'service_unavailable':
    case 'application_error':
    // The dashboard's errors: a message never carries them; retried like any other.
    case 'session_required':
    case 'insufficient_role':
    case 'csrf_token_invalid':
      return { action: 'nak', delayMs: retryDelayMs(deliveryCount, retry), reason };
    default: {
      const unhandled: never = code;
      return { action: 'nak', delayMs: retryDelayMs(deliveryCount, retry), reason: `unknown code ${String(unhandled)}` };
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
