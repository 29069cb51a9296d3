import { HeraldError } from '@herald/core';

/** What a refused request's `Retry-After` says while Postgres cannot be reached. */
export const POSTGRES_RETRY_AFTER_SECONDS = 1;

/** Socket failures: the server is down, restarting, or the network between is cut. */
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs that say the server cannot serve now, not that the statement was wrong: class 08
 * (connection exception), 57P01–57P03 (admin or crash shutdown, cannot connect now), class 53
 * (insufficient resources: 53100 a full disk, 53200 out of memory, 53300 too many connections).
 */
const UNAVAILABLE_STATE = /^(08...|57P0[123]|53...)$/;

/** node-pg's own messages for a connection lost or never made (they carry no code). */
const LOST_CONNECTION =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection unexpectedly ended)/;

/**
 * TypeORM's errors for a statement on a query runner it released: it releases the runner when its
 * connection emits an error (Postgres crashed or was cut mid-transaction), and the transaction's
 * next statement then throws one of these instead of a connection error: from the entity
 * manager (`...ProviderAlreadyReleased...`) or from the runner's own `query` (`...AlreadyReleased...`).
 * Seen as 500s in fault scenario 15 (Postgres killed under load).
 */
const RELEASED_RUNNER = new Set(['QueryRunnerProviderAlreadyReleasedError', 'QueryRunnerAlreadyReleasedError']);

/** How deep `isPostgresUnreachable` follows `driverError` and `cause` links. */
const MAX_CAUSE_DEPTH = 4;

/**
 * True when a query failed because Postgres could not be reached (the pool could not connect, the
 * connection was reset or cut mid-query, the server is shutting down), rather than because of
 * the query. TypeORM wraps the driver's error in `driverError`; our own code may wrap it as a
 * `cause`; both are followed.
 */
export function isPostgresUnreachable(error: unknown, depth = 0): boolean {
  // By shape, not `instanceof Error`: a socket error is made by Node's own realm, which is not the
  // caller's in a vm context (jest runs Herald in one), and a failed connect to a region's database
  // reaches the API as that bare error.
  if (typeof error !== 'object' || error === null || depth > MAX_CAUSE_DEPTH) return false;
  const { name, code, message, driverError, cause } = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
  };
  if (typeof name === 'string' && RELEASED_RUNNER.has(name)) return true;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_STATE.test(code))) return true;
  if (typeof message === 'string' && LOST_CONNECTION.test(message)) return true;
  return isPostgresUnreachable(driverError, depth + 1) || isPostgresUnreachable(cause, depth + 1);
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
