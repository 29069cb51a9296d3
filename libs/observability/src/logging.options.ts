import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { DestinationStream, Logger as PinoInstance, pino } from 'pino';
import type { Options as HttpLoggingOptions } from 'pino-http';
import type { HeraldConfig } from '@herald/config';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What Fastify's middleware layer hands pino-http: the raw request plus the unstripped URL. */
interface RoutedRequest extends IncomingMessage {
  originalUrl?: string;
}

/** Credentials never reach the log store; `set-cookie` would carry dashboard sessions. */
const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

/**
 * Kubelet probes and Prometheus scrapes every few seconds would drown the request log, and so
 * would tracking hits (`/t/o/…`, `/t/c/…`, one per open and click), which are recorded as email
 * events and counted in metrics.
 */
const PROBE_PATHS = /^\/(?:(?:health\/(?:live|ready)|metrics)(?:[/?]|$)|t\/[oc]\/)/;

/** An id we echo into every log line must not let a caller inject a megabyte or a newline. */
const ACCEPTABLE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The role's root pino logger: JSON lines on stdout (or `destination`), tagged with role and region. */
export function createRoleLogger(
  role: string,
  config: Pick<HeraldConfig, 'LOG_LEVEL' | 'HERALD_REGION'>,
  destination?: DestinationStream,
): PinoInstance {
  return pino(
    {
      level: config.LOG_LEVEL,
      base: { role, region: config.HERALD_REGION },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

/** pino-http options for nestjs-pino: one `request completed` line per request. */
export function httpLoggingOptions(logger: PinoInstance): HttpLoggingOptions {
  return {
    logger,
    // Lines logged while handling a request carry only its id; the full request (headers
    // included) is written once, on the completion line.
    quietReqLogger: true,
    // Fastify's middleware layer strips the mount path from `url`; `originalUrl` is the full one.
    autoLogging: { ignore: (req) => PROBE_PATHS.test((req as RoutedRequest).originalUrl ?? req.url ?? '') },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    // Nest's exception filters have answered by the time the response ends, so the `err`
    // pino-http would attach is a made-up "failed with status code" with its own stack; the real
    // exception is logged by Nest with the same reqId.
    customErrorObject: (_req, _res, _err, line: Record<string, unknown>) => withoutKey(line, 'err'),
  };
}

/**
 * FastifyAdapter options that make `request.id` a UUID, or the caller's `x-request-id` when it is
 * a sane one. Under Fastify the request logger takes its `reqId` from `request.id`, so the id in
 * the logs is the one Fastify (and every hook or error body that reads `request.id`) sees.
 */
export const requestIdOptions = {
  requestIdHeader: false as const,
  // Typed by headers alone so the options suit an HTTP/1 and an HTTP/2 adapter alike.
  genReqId: (req: { headers: IncomingHttpHeaders }): string => {
    const incoming = req.headers[REQUEST_ID_HEADER];
    return typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  },
};

function withoutKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([k]) => k !== key));
}
