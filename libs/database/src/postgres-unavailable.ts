import { HeraldError } from '@herald/core';

/** What a refused request's `Retry-After` says while Postgres cannot be reached. */
export const POSTGRES_RETRY_AFTER_SECONDS = 1;

/** Socket failures: the server is down, restarting, or the network between is cut. */
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs that say the server cannot serve now, not that the statement was wrong: class 08
 * (connection exception), 57P01–57P03 (admin or crash shutdown, cannot connect now), 53300
 * (too many connections).
 */
const UNAVAILABLE_STATE = /^(08...|57P0[123]|53300)$/;

/** node-pg's own messages for a connection lost or never made (they carry no code). */
const LOST_CONNECTION =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection unexpectedly ended)/;

/**
 * TypeORM's error for a query on a transaction whose connection it released: it releases the
 * query runner when that connection fails (Postgres crashed or was cut mid-transaction), and the
 * transaction's next statement then throws this instead of a connection error. Seen as a 500 in
 * fault scenario 15 (Postgres killed under load).
 */
const RELEASED_RUNNER = 'QueryRunnerProviderAlreadyReleasedError';

/**
 * True when a query failed because Postgres could not be reached (the pool could not connect, the
 * connection was reset or cut mid-query, the server is shutting down), rather than because of
 * the query. TypeORM wraps the driver's error in `driverError`.
 */
export function isPostgresUnreachable(error: unknown): boolean {
  const cause = (error as { driverError?: unknown } | null)?.driverError ?? error;
  if (!(cause instanceof Error)) return false;
  if (cause.name === RELEASED_RUNNER) return true;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_STATE.test(code))) return true;
  return LOST_CONNECTION.test(cause.message);
}

/**
 * The client's answer when Postgres is unreachable: `service_unavailable` (503 with
 * `Retry-After`), as when Redis is, instead of a 500. As with any 5xx, a request whose connection
 * broke during its commit may have been stored: a retry with its `Idempotency-Key` is answered once.
 */
export function postgresUnavailable(error: unknown): HeraldError | null {
  if (!isPostgresUnreachable(error)) return null;
  return new HeraldError(
    'service_unavailable',
    'The service is temporarily unavailable. Please retry after the number of seconds in the Retry-After header.',
    POSTGRES_RETRY_AFTER_SECONDS,
  );
}
