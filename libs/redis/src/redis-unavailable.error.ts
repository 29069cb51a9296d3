import { ErrorReply } from 'redis';
import { HeraldError } from '@herald/core';

/** What a refused request's `Retry-After` says: RedisService probes every 200 ms, so 1 s is honest. */
export const REDIS_RETRY_AFTER_SECONDS = 1;

/**
 * Redis could not answer (down, frozen, unreachable, still loading): a `service_unavailable`
 * HeraldError, so whatever does not catch it reaches the client as 503 with `Retry-After`
 * (451 4.3.0 over SMTP) rather than a 500. Callers with a fallback catch it with
 * `isRedisUnavailable`; the message names no internals.
 */
export class RedisUnavailableError extends HeraldError {
  constructor(
    readonly reason: string,
    message = 'The service is temporarily unavailable. Please retry after the number of seconds in the Retry-After header.',
    /**
     * The command was written to Redis and went unanswered (timed out, or its socket closed):
     * Redis may still run it, late. False when it was refused without being sent.
     */
    readonly mayHaveRun = false,
  ) {
    super('service_unavailable', message, REDIS_RETRY_AFTER_SECONDS);
  }
}

export const isRedisUnavailable = (error: unknown): error is RedisUnavailableError => error instanceof RedisUnavailableError;

/** Replies a healthy Redis gives while it cannot serve yet: worth a retry, not a 500. */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;

/**
 * True when a command's failure says Redis is unreachable rather than that the command was
 * wrong: every node-redis transport error (offline, socket closed, timeouts) and the transient
 * server replies. Any other error reply (a Lua bug, WRONGTYPE) is a real error and stays one.
 */
export function isUnreachable(error: unknown): boolean {
  if (error instanceof ErrorReply) return TRANSIENT_REPLY.test(error.message);
  return error instanceof Error;
}
