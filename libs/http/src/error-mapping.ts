import { z } from 'zod';
import { HeraldErrorCode } from '@herald/core';

/** Every `name` an error body can carry: the codes httpErrorFor does not rename, in Resend's order. */
export const HTTP_ERROR_NAMES = [
  'missing_api_key',
  'restricted_api_key',
  'invalid_api_key',
  'validation_error',
  'domain_paused',
  'missing_required_field',
  'invalid_parameter',
  'invalid_attachment',
  'invalid_from_address',
  'invalid_access',
  'invalid_region',
  'invalid_idempotency_key',
  'invalid_idempotent_request',
  'concurrent_idempotent_requests',
  'not_found',
  'session_required',
  'insufficient_role',
  'csrf_token_invalid',
  'method_not_allowed',
  'daily_quota_exceeded',
  'monthly_quota_exceeded',
  'rate_limit_exceeded',
  'service_unavailable',
  'application_error',
] as const satisfies readonly HeraldErrorCode[];

export type HttpErrorName = (typeof HTTP_ERROR_NAMES)[number];

export interface HttpError {
  statusCode: number;
  /** The `name` of Resend's error body; a code missing from HTTP_ERROR_NAMES fails to compile below. */
  name: HttpErrorName;
}

/** Resend's error body: `message` is for people, `name` for code. */
export const errorBodySchema = z
  .object({
    statusCode: z.int().meta({ example: 422 }),
    name: z.enum(HTTP_ERROR_NAMES).meta({ example: 'validation_error' }),
    message: z.string().meta({
      example: 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
    }),
  })
  .meta({ description: "Resend's error body; `message` is for people, `name` for code." });

export type ErrorBody = z.infer<typeof errorBodySchema>;

/** The one place a domain error code becomes an HTTP status and a Resend error name. */
export function httpErrorFor(code: HeraldErrorCode): HttpError {
  switch (code) {
    case 'missing_api_key':
      return { statusCode: 401, name: code };
    case 'restricted_api_key':
      return { statusCode: 401, name: code };
    case 'invalid_api_key':
      return { statusCode: 403, name: code };
    case 'forbidden_from_domain':
    case 'quota_reached':
      return { statusCode: 403, name: 'validation_error' };
    case 'domain_paused':
      return { statusCode: 403, name: code };
    case 'validation_error':
    case 'invalid_scheduled_at':
      return { statusCode: 422, name: 'validation_error' };
    case 'missing_required_field':
    case 'invalid_parameter':
    case 'invalid_attachment':
    case 'invalid_from_address':
    case 'invalid_access':
    case 'invalid_region':
      return { statusCode: 422, name: code };
    case 'invalid_idempotency_key':
      return { statusCode: 400, name: code };
    case 'invalid_idempotent_request':
    case 'concurrent_idempotent_requests':
      return { statusCode: 409, name: code };
    case 'not_found':
      return { statusCode: 404, name: code };
    case 'session_required':
      return { statusCode: 401, name: code };
    case 'insufficient_role':
    case 'csrf_token_invalid':
      return { statusCode: 403, name: code };
    case 'method_not_allowed':
      return { statusCode: 405, name: code };
    case 'payload_too_large':
      return { statusCode: 413, name: 'validation_error' };
    case 'uri_too_long':
      return { statusCode: 414, name: 'validation_error' };
    case 'headers_too_large':
      return { statusCode: 431, name: 'validation_error' };
    case 'request_timeout':
      return { statusCode: 408, name: 'validation_error' };
    case 'malformed_request':
      return { statusCode: 400, name: 'validation_error' };
    case 'method_not_implemented':
      return { statusCode: 501, name: 'method_not_allowed' };
    case 'daily_quota_exceeded':
    case 'monthly_quota_exceeded':
    case 'rate_limit_exceeded':
      return { statusCode: 429, name: code };
    case 'service_unavailable':
      return { statusCode: 503, name: code };
    case 'application_error':
      return { statusCode: 500, name: code };
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}
