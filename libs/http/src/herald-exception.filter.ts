import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError, isHeraldError } from '@herald/core';
import { httpErrorFor } from './error-mapping';

export interface ErrorBody {
  statusCode: number;
  name: string;
  message: string;
}

/** Fastify's own errors (body parsing, size) carry a code and a status. */
interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message: string;
}

/** Answers with Resend's error body (and `retry-after` when the error has one). */
export function sendError(reply: FastifyReply, error: HeraldError): FastifyReply {
  const { statusCode, name } = httpErrorFor(error.code);
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  const body: ErrorBody = { statusCode, name, message: error.message };
  return reply.status(statusCode).type('application/json').send(body);
}

const INTERNAL_MESSAGE = 'Internal server error. We are unable to process your request right now, please try again later.';

/**
 * Turns every failure into Resend's error body `{statusCode, name, message}`. Unknown errors
 * are logged here and answered with a generic 500: no stack trace or SQL reaches a client.
 */
@Catch()
export class HeraldExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrors');

  /** @param otherMethodMatches whether the path is served under another HTTP method (→ 405). */
  constructor(private readonly otherMethodMatches: (method: string, url: string) => boolean = () => false) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    void sendError(reply, this.toHeraldError(exception, request));
  }

  private toHeraldError(exception: unknown, request: FastifyRequest): HeraldError {
    if (isHeraldError(exception)) return exception;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404 && this.otherMethodMatches(request.method, request.url)) {
        return new HeraldError('method_not_allowed', `Method ${request.method} is not allowed for this path.`);
      }
      if (status === 404) return new HeraldError('not_found', 'The requested endpoint does not exist.');
      if (status === 405) return new HeraldError('method_not_allowed', 'Method is not allowed for the requested path.');
      if (status < 500) return new HeraldError('validation_error', exception.message);
    }
    const fastifyError = exception as FastifyLikeError;
    switch (fastifyError?.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return new HeraldError('payload_too_large', 'The request body is larger than this API accepts.');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return new HeraldError('validation_error', 'The request body must be JSON (Content-Type: application/json).');
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return new HeraldError('validation_error', 'The request body is not valid JSON.');
      default:
        break; // not one of Fastify's body errors
    }
    if (exception instanceof SyntaxError) return new HeraldError('validation_error', 'The request body is not valid JSON.');
    this.logger.error(exception instanceof Error ? exception.stack ?? exception.message : String(exception));
    return new HeraldError('application_error', INTERNAL_MESSAGE);
  }
}
