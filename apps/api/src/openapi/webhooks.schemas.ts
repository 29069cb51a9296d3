import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiParam, ApiQuery } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { MAX_ENDPOINT_LENGTH, WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES } from '@herald/webhooks';
import { constant, nullable, REST_TIMESTAMP, UUID } from './schemas';

/*
 * The schemas and decorators of the /webhooks routes. They are inline (not registered under
 * `components.schemas`): registering them, and a `webhooks` tag description, takes a line each in
 * openapi.document.ts and schemas.ts, left to the change that owns those files.
 */

const ENDPOINT: SchemaObject = {
  type: 'string',
  format: 'uri',
  maxLength: MAX_ENDPOINT_LENGTH,
  description:
    'An absolute https URL without credentials (http only where WEBHOOK_ALLOW_HTTP is on). Literal private, loopback, ' +
    'link-local and metadata IP addresses are refused unless WEBHOOK_ALLOWED_ADDRESSES lists them.',
  example: 'https://example.com/handler',
};
const EVENTS: SchemaObject = {
  type: 'array',
  minItems: 1,
  items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
  description: 'The event types delivered to the endpoint.',
  example: ['email.sent', 'email.delivered'],
};
const STATUS: SchemaObject = { type: 'string', enum: [...WEBHOOK_STATUSES], example: 'enabled' };
const SECRET: SchemaObject = {
  type: 'string',
  pattern: '^whsec_[A-Za-z0-9+/]+=*$',
  description: 'The Standard Webhooks signing secret: `whsec_` + base64 key.',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

const summary: SchemaObject = {
  type: 'object',
  required: ['id', 'endpoint', 'events', 'status', 'created_at'],
  properties: { id: UUID, endpoint: ENDPOINT, events: { ...EVENTS, nullable: true }, status: STATUS, created_at: REST_TIMESTAMP },
};

const EVENT_ID: SchemaObject = {
  type: 'string',
  pattern: '^msg_[0-9a-f]{32}$',
  description: 'The webhook message id: the `webhook-id` / `svix-id` header of every delivery of it.',
  example: 'msg_0193a1b2c3d4e5f60718293a4b5c6d7e',
};
const EVENT_STATUS: SchemaObject = {
  type: 'string',
  enum: ['success', 'pending', 'failed', 'attempting'],
  description: '`pending`: waiting for its next attempt; `attempting`: being delivered; `success`: a 2xx; `failed`: out of attempts, or a 410.',
};
const eventLogItem: SchemaObject = {
  type: 'object',
  required: ['id', 'type', 'created_at', 'status'],
  properties: { id: EVENT_ID, type: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, created_at: REST_TIMESTAMP, status: EVENT_STATUS },
};
const attempt: SchemaObject = {
  type: 'object',
  required: ['id', 'http_status_code', 'response', 'sent_at'],
  properties: {
    id: { type: 'string', pattern: '^\\d+$', example: '42' },
    http_status_code: { type: 'integer', nullable: true, description: 'Null when no response came (refused address, timeout, connection error).', example: 500 },
    response: { type: 'string', description: 'The first KiB of the response body, or why there was no response.' },
    sent_at: REST_TIMESTAMP,
  },
};

export const WEBHOOK_SCHEMAS = {
  CreateWebhookRequest: { type: 'object', required: ['endpoint', 'events'], properties: { endpoint: ENDPOINT, events: EVENTS } },
  UpdateWebhookRequest: { type: 'object', properties: { endpoint: ENDPOINT, events: EVENTS, status: STATUS } },
  WebhookSecret: {
    type: 'object',
    required: ['object', 'id', 'signing_secret'],
    properties: { object: constant('webhook'), id: UUID, signing_secret: SECRET },
  },
  Webhook: {
    type: 'object',
    required: ['object', ...(summary.required ?? []), 'signing_secret'],
    properties: { object: constant('webhook'), ...summary.properties, signing_secret: SECRET },
  },
  WebhookList: {
    type: 'object',
    required: ['object', 'has_more', 'data'],
    properties: { object: constant('list'), has_more: { type: 'boolean' }, data: { type: 'array', items: summary } },
  },
  WebhookReference: { type: 'object', required: ['object', 'id'], properties: { object: constant('webhook'), id: UUID } },
  DeletedWebhook: {
    type: 'object',
    required: ['object', 'id', 'deleted'],
    properties: { object: constant('webhook'), id: UUID, deleted: { type: 'boolean', enum: [true] } },
  },
  WebhookEventList: {
    type: 'object',
    required: ['object', 'has_more', 'data'],
    properties: { object: constant('list'), has_more: { type: 'boolean' }, data: { type: 'array', items: eventLogItem } },
  },
  WebhookEvent: {
    type: 'object',
    required: ['object', ...(eventLogItem.required ?? []), 'next_attempt_at', 'payload'],
    properties: {
      object: constant('webhook_event'),
      ...eventLogItem.properties,
      next_attempt_at: nullable(REST_TIMESTAMP, 'When the next attempt is due; null once delivered or failed.'),
      payload: {
        type: 'object',
        required: ['type', 'created_at', 'data'],
        description: 'The body POSTed to the endpoint.',
        properties: { type: { type: 'string' }, created_at: { type: 'string', format: 'date-time' }, data: { type: 'object' } },
      },
    },
  },
  WebhookEventReference: { type: 'object', required: ['object', 'id'], properties: { object: constant('webhook_event'), id: EVENT_ID } },
  WebhookEventAttemptList: {
    type: 'object',
    required: ['object', 'has_more', 'data'],
    properties: { object: constant('list'), has_more: { type: 'boolean' }, data: { type: 'array', items: attempt } },
  },
} satisfies Record<string, SchemaObject>;

export type WebhookSchemaName = keyof typeof WEBHOOK_SCHEMAS;

export const ApiWebhookOk = (name: WebhookSchemaName, description: string) =>
  ApiOkResponse({ description, schema: WEBHOOK_SCHEMAS[name] });

export const ApiWebhookBody = (name: 'CreateWebhookRequest' | 'UpdateWebhookRequest') => ApiBody({ schema: WEBHOOK_SCHEMAS[name] });

export const ApiWebhookEventParam = () =>
  ApiParam({ name: 'eventId', description: 'The webhook event (message) id.', schema: { type: 'string', pattern: '^msg_[0-9a-f]{32}$' } });

/** `limit` and an `after` cursor (`what`: an event id, an attempt id). */
export const ApiWebhookLogPageQuery = (what: string) =>
  applyDecorators(
    ApiQuery({ name: 'limit', required: false, description: 'Items per page.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }),
    ApiQuery({ name: 'after', required: false, description: `The ${what} to list after (older).`, schema: { type: 'string' } }),
  );
