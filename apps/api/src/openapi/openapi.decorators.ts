import { applyDecorators } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiHeader, ApiOkResponse, ApiParam, ApiQuery } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { PAGE_CURSOR, PAGE_DEFAULT_LIMIT, PAGE_LIMIT } from '@herald/http';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '@herald/idempotency';
import { suppressionListEntrySchema } from '@herald/suppressions';
import { webhookEventIdSchema } from '@herald/webhooks';
import { RATE_LIMIT_HEADERS } from './error-responses';
import { RequestSchemaName, ResponseSchemaName, schemaRef } from './schemas';
import { jsonSchemaOf } from './zod-schema';

/*
 * The decorators that describe Herald's routes in /openapi.json. Handlers take `unknown` bodies
 * and queries (the zod validators own their shape), so everything a client generator needs is
 * declared here, by reference to the component schemas generated in ./schemas.
 */

export { ApiErrorResponses } from './error-responses';

/** 200 with a JSON body (Herald never answers 201 or 204: Resend's clients expect a body). */
export const ApiOk = (schema: ResponseSchemaName, description: string) =>
  ApiOkResponse({ description, schema: schemaRef(schema), headers: RATE_LIMIT_HEADERS });

/** 202 with a JSON body: taken, the work goes on in the background (a CSV import). */
export const ApiAccepted = (schema: ResponseSchemaName, description: string) =>
  ApiAcceptedResponse({ description, schema: schemaRef(schema), headers: RATE_LIMIT_HEADERS });

export const ApiJsonBody = (schema: RequestSchemaName) => ApiBody({ schema: schemaRef(schema) });

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

export const ApiIdParam = (what: string) => ApiParam({ name: 'id', description: `The ${what}'s id.`, schema: { type: 'string', format: 'uuid' } });

export const ApiWebhookEventParam = () =>
  ApiParam({ name: 'eventId', description: 'The webhook event (message) id.', schema: jsonSchemaOf(webhookEventIdSchema) });

export const ApiIdOrEmailParam = () =>
  ApiParam({
    name: 'idOrEmail',
    description: "The entry's id, or its email address (URL-encoded, e.g. `bounced%40example.com`).",
    schema: { type: 'string' },
  });

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

/** `limit` and an `after` cursor (`what`: an event id, an attempt id). */
export const ApiWebhookLogPageQuery = (what: string) =>
  ApiPageQuery('item', { forwardOnly: true, cursor: { type: 'string', description: `An ${what}.` } });

export const ApiSuppressionPageQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'origin',
      required: false,
      description: 'Only entries of this origin.',
      schema: jsonSchemaOf(suppressionListEntrySchema.shape.origin),
    }),
    ApiPageQuery('entry'),
  );

/** GET /stats: the range, its granularity and the filters. */
export const ApiStatsQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'from',
      required: false,
      description: 'Start of the range (ISO 8601 date or date-time), widened to a whole bucket. Default: 7 days before `to`.',
      schema: { type: 'string', format: 'date-time', example: '2026-10-27T00:00:00Z' },
    }),
    ApiQuery({
      name: 'to',
      required: false,
      description: 'End of the range (exclusive), widened to a whole bucket. Default: now. At most 93 days of hours or 400 days of days.',
      schema: { type: 'string', format: 'date-time', example: '2026-11-26T00:00:00Z' },
    }),
    ApiQuery({
      name: 'granularity',
      required: false,
      description: 'UTC hours or UTC days.',
      schema: { type: 'string', enum: ['hour', 'day'], default: 'hour' },
    }),
    ApiQuery({ name: 'domain_id', required: false, description: 'Only this sending domain.', schema: { type: 'string', format: 'uuid' } }),
    ApiQuery({ name: 'region', required: false, description: "Only this region's events.", schema: { type: 'string', example: 'us-east-1' } }),
  );

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
