import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError, isHeraldError } from '@herald/core';
import { type ErrorBody, httpErrorFor } from './error-mapping';

/** Answers with Resend's error body (and `retry-after` when the error has one). */
export function sendError(reply: FastifyReply, error: HeraldError): FastifyReply {
  const { statusCode, name } = httpErrorFor(error.code);
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  const body: ErrorBody = { statusCode, name, message: error.message };
  return reply.status(statusCode).type('application/json').send(body);
}

/** The 413 of a body over the route's limit (API_BODY_LIMIT_BYTES). */
export const bodyTooLarge = (limitBytes: number): HeraldError =>
  new HeraldError('payload_too_large', `The request body must not be larger than ${limitBytes} bytes.`);

export const INTERNAL_MESSAGE = 'Internal server error. We are unable to process your request right now, please try again later.';

/**
 * Turns every failure into Resend's error body `{statusCode, name, message}`. Unknown errors
 * are logged here and answered with a generic 500: no stack trace or SQL reaches a client.
 */
@Catch()
export class HeraldExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrors');

  /**
   * @param allowedMethods the methods served for a URL's path, none if the path is unknown (404 vs 405).
   * @param translate turns a backing service's failure into the client's answer (Postgres
   *   unreachable → 503), or null for an error that is a 500.
   */
  constructor(
    private readonly allowedMethods: (url: string) => string[] = () => [],
    private readonly translate: (error: unknown) => HeraldError | null = () => null,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const error = this.toHeraldError(exception, request);
    // RFC 9110: a 405 lists what the path does allow.
    if (error.code === 'method_not_allowed') reply.header('allow', this.allowedMethods(request.url).join(', '));
    void sendError(reply, error);
  }

  private toHeraldError(exception: unknown, request: FastifyRequest): HeraldError {
    if (isHeraldError(exception)) return exception;
    // Nest hands Fastify's own errors (body size, media type, ...) on as HttpExceptions with their status.
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        const allowed = this.allowedMethods(request.url);
        if (allowed.length > 0 && !allowed.includes(request.method)) {
          return new HeraldError('method_not_allowed', `Method ${request.method} is not allowed for this path.`);
        }
        return new HeraldError('not_found', 'The requested endpoint does not exist.');
      }
      if (status === 405) return new HeraldError('method_not_allowed', `Method ${request.method} is not allowed for this path.`);
      if (status === 413) {
        return bodyTooLarge(request.routeOptions.bodyLimit);
      }
      if (status === 415) return new HeraldError('validation_error', 'The request body must be JSON (Content-Type: application/json).');
      if (status < 500) return new HeraldError('validation_error', exception.message);
    }
    if (exception instanceof SyntaxError) return new HeraldError('validation_error', 'The request body is not valid JSON.');
    const translated = this.translate(exception);
    if (translated) {
      this.logger.warn(`${request.method} ${request.url.split('?')[0]} answered ${translated.code}: ${(exception as Error).message}`);
      return translated;
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return new HeraldError('application_error', INTERNAL_MESSAGE);
  }
}
