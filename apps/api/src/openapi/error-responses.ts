import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { HeaderObject, OpenAPIObject, ReferenceObject } from '@nestjs/swagger';
import { HeraldConfig } from '@herald/config';
import { bodyTooLarge, type ErrorBody, type HttpErrorName } from '@herald/http';
import { rateLimitError } from '@herald/limits';
import { schemaRef } from './schemas';

/*
 * The error responses of Herald's routes: Resend's body `{statusCode, name, message}`, with an
 * example per status. A route gives its own example where the default would not be what it
 * answers (its 404 names the resource; its 422 is the first problem a bad request to it meets),
 * because every documented example is sent to the running API by the document's e2e suite and
 * must come back as documented.
 */

/** Response headers, registered under `components.headers` by the document builder. */
export const RESPONSE_HEADERS: Record<string, HeaderObject> = {
  RateLimitLimit: { description: "Requests per second allowed for the team's API keys together.", schema: { type: 'integer' } },
  RateLimitRemaining: { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};
const header = (name: string): ReferenceObject => ({ $ref: `#/components/headers/${name}` });
export const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': header('RateLimitLimit'),
  'ratelimit-remaining': header('RateLimitRemaining'),
  'ratelimit-reset': header('RateLimitReset'),
};

interface ErrorExample {
  name: HttpErrorName;
  message: string;
}

const ERRORS = {
  400: {
    description: '`invalid_idempotency_key`: the `Idempotency-Key` header is not 1–256 characters.',
    example: { name: 'invalid_idempotency_key', message: 'The key must be between 1-256 chars.' },
  },
  401: {
    description:
      '`missing_api_key`: no `Authorization: Bearer` header. `restricted_api_key`: the key has `sending_access`, ' +
      'which allows only the two send endpoints.',
    example: {
      name: 'missing_api_key',
      message: 'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY',
    },
  },
  403: {
    description:
      '`invalid_api_key`: the key is malformed, unknown or deleted. On the send endpoints, `validation_error`: ' +
      'the team may not send from the `from` domain. On `POST /domains`, `validation_error`: the domain has been ' +
      'registered already (by this team or another). On a broadcast send (`POST /broadcasts` with `send`, ' +
      '`POST /broadcasts/{id}/send`), `validation_error`: the sending domain is not verified, or the segment would take ' +
      "the team past its plan's quota (contacts quota reached).",
    example: { name: 'invalid_api_key', message: 'API key is invalid' },
  },
  404: { description: '`not_found`: the team has no such resource.', example: { name: 'not_found', message: 'Email not found' } },
  409: {
    description:
      '`invalid_idempotent_request`: the `Idempotency-Key` was used with a different body. ' +
      '`concurrent_idempotent_requests`: the first request with this key is still in progress; retry later.',
    example: { name: 'invalid_idempotent_request', message: 'Same idempotency key used with a different request payload. Please use a new key.' },
  },
  413: {
    description: '`validation_error`: the request body is larger than the API accepts (`API_BODY_LIMIT_BYTES`).',
    // The deployment's limit is written in by withDeploymentExamples.
    example: { name: 'validation_error', message: bodyTooLarge(60 * 1024 * 1024).message },
  },
  422: {
    description:
      '`validation_error`, `missing_required_field`, `invalid_parameter`, `invalid_attachment`, `invalid_from_address`, ' +
      '`invalid_access`, `invalid_region`: a field, parameter or path id is invalid; `message` names it.',
    example: {
      name: 'validation_error',
      message: 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
    },
  },
  429: {
    description:
      "`rate_limit_exceeded`: over the team's requests per second. `daily_quota_exceeded` / `monthly_quota_exceeded` " +
      "(send endpoints): over the plan's email quota. `retry-after` says when to try again.",
    // The deployment's default rate is written in by withDeploymentExamples.
    example: { name: 'rate_limit_exceeded', message: rateLimitMessage(10) },
  },
  503: {
    description:
      '`service_unavailable` (send endpoints): a request could not be checked safely while Redis is unreachable: ' +
      'an `Idempotency-Key` with no committed answer yet, or a send beyond what quotas allow unchecked. Nothing was ' +
      'sent; retry (with the same key) after `retry-after` seconds.',
    example: {
      name: 'service_unavailable',
      message:
        'Idempotency keys cannot be checked right now, and this request was not processed. ' +
        'Please retry with the same key after the number of seconds in the Retry-After header.',
    },
  },
} as const satisfies Record<number, { description: string; example: ErrorExample }>;

export type ErrorStatus = keyof typeof ERRORS;
/** A route's own examples: a message (the status's usual `name`), or a name and a message. */
export type ErrorExamples = Partial<Record<ErrorStatus, string | ErrorExample>>;

/** Resend-style error responses for the given statuses, with the route's own examples where it has them. */
export const ApiErrorResponses = (statuses: ErrorStatus[], examples: ErrorExamples = {}) =>
  applyDecorators(
    ...statuses.map((status) => {
      const own = examples[status];
      const { name, message } = typeof own === 'string' ? { ...ERRORS[status].example, message: own } : (own ?? ERRORS[status].example);
      const example: ErrorBody = { statusCode: status, name, message };
      return ApiResponse({
        status,
        description: ERRORS[status].description,
        schema: schemaRef('Error'),
        example,
        ...(status === 429 ? { headers: { ...RATE_LIMIT_HEADERS, 'retry-after': header('RetryAfter') } } : {}),
        ...(status === 503 ? { headers: { 'retry-after': header('RetryAfter') } } : {}),
      });
    }),
  );

function rateLimitMessage(limit: number): string {
  return rateLimitError({ allowed: false, limit, remaining: 0, resetSeconds: 1 }).message;
}

/** The 413 and 429 examples as this deployment words them (its body limit, its default rate). */
export function withDeploymentExamples(
  document: OpenAPIObject,
  config: Pick<HeraldConfig, 'API_BODY_LIMIT_BYTES' | 'RATE_LIMIT_DEFAULT'>,
): OpenAPIObject {
  const messages: Partial<Record<string, string>> = {
    413: bodyTooLarge(config.API_BODY_LIMIT_BYTES).message,
    429: rateLimitMessage(config.RATE_LIMIT_DEFAULT),
  };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, message] of Object.entries(messages)) {
        const media = operation?.responses?.[status]?.content?.['application/json'];
        if (media?.example) media.example = { ...media.example, message };
      }
    }
  }
  return document;
}
