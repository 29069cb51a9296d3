import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { MAX_ENDPOINT_LENGTH, WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES } from '@herald/webhooks';
import { constant, REST_TIMESTAMP, UUID } from './schemas';

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
    'An absolute https URL without credentials (http is accepted outside production). Literal private, loopback, ' +
    'link-local and metadata IP addresses are refused.',
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
} satisfies Record<string, SchemaObject>;

export type WebhookSchemaName = keyof typeof WEBHOOK_SCHEMAS;

export const ApiWebhookOk = (name: WebhookSchemaName, description: string) =>
  ApiOkResponse({ description, schema: WEBHOOK_SCHEMAS[name] });

export const ApiWebhookBody = (name: 'CreateWebhookRequest' | 'UpdateWebhookRequest') => ApiBody({ schema: WEBHOOK_SCHEMAS[name] });

export const ApiWebhookPageQuery = () =>
  applyDecorators(
    ApiQuery({ name: 'limit', required: false, description: 'Items per page.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }),
    ApiQuery({ name: 'after', required: false, description: 'The id of the webhook to list after (older).', schema: { type: 'string', format: 'uuid' } }),
    ApiQuery({ name: 'before', required: false, description: 'The id of the webhook to list before (newer).', schema: { type: 'string', format: 'uuid' } }),
  );
