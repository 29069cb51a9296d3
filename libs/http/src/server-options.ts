import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError } from '@herald/core';
import { type ErrorBody, httpErrorFor } from './error-mapping';
import { INTERNAL_MESSAGE, sendError } from './herald-exception.filter';

/**
 * The longest path parameter served. An email address (GET /suppressions/:idOrEmail) may have
 * 254 characters (RFC 5321's path limit) and is commonly allowed 320; Fastify's default of 100
 * turned a longer address into a 414. A longer parameter is no id or address of ours.
 */
export const MAX_PATH_PARAM_LENGTH = 320;

/**
 * Headers on every answer: JSON is never to be sniffed as HTML, and no cache may keep a response
 * (new API keys, webhook signing secrets, a team's emails), as Stripe does.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/**
 * Fastify server options for a Herald API, spread into the FastifyAdapter. The router and Node's
 * HTTP parser answer a few failures before any route or hook runs (a bad URL, a method Node does
 * not know, oversized headers); these handlers give them Herald's error body too.
 */
export const httpServerOptions = {
  routerOptions: { ignoreDuplicateSlashes: true, ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAM_LENGTH },
  // The router answers these before any route's hooks exist, onSend included.
  frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) =>
    void sendError(reply.headers(SECURITY_HEADERS), routerError(error)),
  clientErrorHandler: answerClientError,
};

function routerError(error: FastifyError): HeraldError {
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new HeraldError('uri_too_long', `A path parameter (an id or an email address) must be at most ${MAX_PATH_PARAM_LENGTH} characters.`);
    case 'FST_ERR_BAD_URL':
      return new HeraldError('malformed_request', 'The URL path is not valid percent-encoding.');
    default:
      return new HeraldError('application_error', INTERNAL_MESSAGE);
  }
}

/** Node's `clientError`: the bytes are no HTTP request Node can hand on, so the answer goes to the socket directly. */
function answerClientError(error: ConnectionError, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) socket.write(rawResponse(clientError(error)));
  socket.destroy(error);
}

function clientError(error: ConnectionError): HeraldError {
  // Node hands the bytes read so far as a Buffer (Fastify's type says its JSON form).
  const raw: unknown = error.rawPacket;
  const head = Buffer.isBuffer(raw) ? raw.toString('latin1', 0, Math.min(raw.length, maxHeaderSize)) : '';
  switch (error.code) {
    case 'HPE_INVALID_METHOD': {
      const method = /^([A-Za-z-]{1,32}) /.exec(head)?.[1];
      return new HeraldError('method_not_implemented', `Method ${method ? `\`${method}\` ` : ''}is not supported by this API.`);
    }
    case 'HPE_HEADER_OVERFLOW': {
      const limit = `a request's URL and headers must be at most ${maxHeaderSize} bytes together.`;
      // A request line that has not ended within the limit: the URL alone is too long.
      const longUrl = /^[A-Za-z-]+ \//.test(head) && !head.includes('\r\n');
      return longUrl
        ? new HeraldError('uri_too_long', `The URL is too long: ${limit}`)
        : new HeraldError('headers_too_large', `The headers are too large: ${limit}`);
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HeraldError('request_timeout', 'The request was not received in time.');
    default:
      return new HeraldError('malformed_request', 'The request is not valid HTTP.');
  }
}

function rawResponse(error: HeraldError): string {
  const { statusCode, name } = httpErrorFor(error.code);
  const body = JSON.stringify({ statusCode, name, message: error.message } satisfies ErrorBody);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    ...SECURITY_HEADERS,
    connection: 'close',
  };
  const head = Object.entries(headers).map(([header, value]) => `${header}: ${value}\r\n`);
  return `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}\r\n${head.join('')}\r\n${body}`;
}
