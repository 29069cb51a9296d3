import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { HeaderObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { PAGE_CURSOR, PAGE_DEFAULT_LIMIT, PAGE_LIMIT } from '@herald/http';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '@herald/idempotency';
import { ERROR_NAMES, SchemaName, schemaRef } from './schemas';
import { jsonSchemaOf } from './zod-schema';

/*
 * The decorators that describe Herald's routes in /openapi.json. Handlers take `unknown` bodies
 * and queries (the zod validators own their shape), so everything a client generator needs is
 * declared here, by reference to the component schemas of ./schemas.
 */

/** Response headers, registered under `components.headers` by the document builder. */
export const RESPONSE_HEADERS: Record<string, HeaderObject> = {
  RateLimitLimit: { description: "Requests per second allowed for the team's API keys together.", schema: { type: 'integer' } },
  RateLimitRemaining: { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};
const header = (name: string): ReferenceObject => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': header('RateLimitLimit'),
  'ratelimit-remaining': header('RateLimitRemaining'),
  'ratelimit-reset': header('RateLimitReset'),
};

/** 200 with a JSON body (Herald never answers 201 or 204: Resend's clients expect a body). */
export const ApiOk = (schema: SchemaName, description: string) =>
  ApiOkResponse({ description, schema: schemaRef(schema), headers: RATE_LIMIT_HEADERS });

type ErrorName = (typeof ERROR_NAMES)[number];
interface ErrorCase {
  description: string;
  example: ErrorName;
  message: string;
}

const ERRORS = {
  400: {
    description: '`invalid_idempotency_key`: the `Idempotency-Key` header is not 1–256 characters.',
    example: 'invalid_idempotency_key',
    message: 'The key must be between 1-256 chars.',
  },
  401: {
    description:
      '`missing_api_key`: no `Authorization: Bearer` header. `restricted_api_key`: the key has `sending_access`, ' +
      'which allows only the two send endpoints.',
    example: 'missing_api_key',
    message: 'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY',
  },
  403: {
    description:
      '`invalid_api_key`: the key is malformed, unknown or deleted. On the send endpoints, `validation_error`: ' +
      'the team may not send from the `from` domain. On `POST /domains`, `validation_error`: the domain has been ' +
      'registered already (by this team or another).',
    example: 'invalid_api_key',
    message: 'API key is invalid',
  },
  404: { description: '`not_found`: the team has no such resource.', example: 'not_found', message: 'Email not found' },
  409: {
    description:
      '`invalid_idempotent_request`: the `Idempotency-Key` was used with a different body. ' +
      '`concurrent_idempotent_requests`: the first request with this key is still in progress; retry later.',
    example: 'invalid_idempotent_request',
    message: 'Same idempotency key used with a different request payload. Please use a new key.',
  },
  413: {
    description: '`validation_error`: the request body is larger than the API accepts (`API_BODY_LIMIT_BYTES`).',
    example: 'validation_error',
    message: 'The request body must not be larger than 62914560 bytes.',
  },
  422: {
    description:
      '`validation_error`, `missing_required_field`, `invalid_parameter`, `invalid_attachment`, `invalid_from_address`, ' +
      '`invalid_access`, `invalid_region`: a field, parameter or path id is invalid; `message` names it.',
    example: 'validation_error',
    message: 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
  },
  429: {
    description:
      '`rate_limit_exceeded`: over the team\'s requests per second. `daily_quota_exceeded` / `monthly_quota_exceeded` ' +
      '(send endpoints): over the plan\'s email quota. `retry-after` says when to try again.',
    example: 'rate_limit_exceeded',
    message:
      'Too many requests. You can only make 10 requests per second. See rate limit response headers for more information. ' +
      'Or contact support to increase rate limit.',
  },
  503: {
    description:
      '`service_unavailable` (send endpoints): a request could not be checked safely while Redis is unreachable: ' +
      'an `Idempotency-Key` with no committed answer yet, or a send beyond what quotas allow unchecked. Nothing was ' +
      'sent; retry (with the same key) after `retry-after` seconds.',
    example: 'service_unavailable',
    message:
      'Idempotency keys cannot be checked right now, and this request was not processed. ' +
      'Please retry with the same key after the number of seconds in the Retry-After header.',
  },
} as const satisfies Record<number, ErrorCase>;

export type ErrorStatus = keyof typeof ERRORS;

/** Resend-style error responses, `{statusCode, name, message}`, for the given statuses. */
export const ApiErrorResponses = (...statuses: ErrorStatus[]) =>
  applyDecorators(
    ...statuses.map((status) => {
      const { description, example, message } = ERRORS[status];
      return ApiResponse({
        status,
        description,
        schema: schemaRef('Error'),
        example: { statusCode: status, name: example, message },
        ...(status === 429 ? { headers: { ...RATE_LIMIT_HEADERS, 'retry-after': header('RetryAfter') } } : {}),
        ...(status === 503 ? { headers: { 'retry-after': header('RetryAfter') } } : {}),
      });
    }),
  );

/*
 * `@Headers('name')` params are reflected as required header parameters. An explicit @ApiHeader
 * with the same name (exactly: the merge is case-sensitive) is merged into the reflected one,
 * which is the supported way to make it optional and describe it.
 */
export const ApiIdempotencyKeyHeader = () =>
  ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Makes the request safe to retry: the same key with the same body within 24 hours (the default window) ' +
      'returns the first response without sending again; with another body it is a 409. Scoped to the team and endpoint.',
    schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, example: 'welcome-user/123456789' },
  });

export const ApiBatchValidationHeader = () =>
  ApiHeader({
    name: 'x-batch-validation',
    required: false,
    description:
      '`strict`: one invalid email fails the whole batch and nothing is sent. `permissive`: the valid emails ' +
      'are sent and the invalid ones are listed in `errors`.',
    schema: { type: 'string', enum: ['strict', 'permissive'], default: 'strict' },
  });

export const ApiIdParam = (what: string) =>
  ApiParam({ name: 'id', description: `The ${what}'s id.`, schema: { type: 'string', format: 'uuid' } });

/**
 * `limit`, `after` and `before` of a keyset-paged list, from the page parser's own shapes (see
 * parsePage). `noun` names the items; with `limitOptional` the list is whole when no limit is
 * given (Resend's older list endpoints); a `forwardOnly` log takes only `after`.
 */
export const ApiPageQuery = (
  noun = 'item',
  { limitOptional = false, forwardOnly = false, cursor }: { limitOptional?: boolean; forwardOnly?: boolean; cursor?: SchemaObject } = {},
) =>
  applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      description: limitOptional
        ? `${capitalized(noun)}s per page. Without it (and without a cursor), every ${noun} in one response.`
        : `${capitalized(noun)}s per page.`,
      schema: jsonSchemaOf(limitOptional ? PAGE_LIMIT : PAGE_LIMIT.default(PAGE_DEFAULT_LIMIT)),
    }),
    ApiQuery({
      name: 'after',
      required: false,
      description: forwardOnly
        ? `The ${noun} to list after (older).`
        : `Cursor: the id of the ${noun} the page starts after (older ${noun}s). Not with \`before\`.`,
      schema: cursor ?? jsonSchemaOf(PAGE_CURSOR),
    }),
    ...(forwardOnly
      ? []
      : [
          ApiQuery({
            name: 'before',
            required: false,
            description: `Cursor: the id of the ${noun} the page ends before (newer ${noun}s). Not with \`after\`.`,
            schema: cursor ?? jsonSchemaOf(PAGE_CURSOR),
          }),
        ]),
  );

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
