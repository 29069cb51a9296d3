import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiParam } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { addressAllowList, createWebhookSchema, type EndpointPolicy, updateWebhookSchema, WEBHOOK_EVENT_TYPES } from '@herald/webhooks';
import { ApiPageQuery } from './openapi.decorators';
import { jsonSchemaOf } from './zod-schema';
import { constant, nullable, REST_TIMESTAMP, UUID } from './schemas';

/*
 * The schemas and decorators of the /webhooks routes. They are inline (not registered under
 * `components.schemas`): registering them, and a `webhooks` tag description, takes a line each in
 * openapi.document.ts and schemas.ts, left to the change that owns those files.
 */

// The request bodies are the validators' own zod schemas; the policy only changes what passes, not the shape.
const DOCUMENTED_POLICY: EndpointPolicy = { allowHttp: false, allowed: addressAllowList([]) };
const CREATE_REQUEST = jsonSchemaOf(createWebhookSchema(DOCUMENTED_POLICY));
const UPDATE_REQUEST = jsonSchemaOf(updateWebhookSchema(DOCUMENTED_POLICY));
const property = (schema: SchemaObject, name: string) => schema.properties?.[name] as SchemaObject;
const ENDPOINT = property(CREATE_REQUEST, 'endpoint');
const EVENTS = property(CREATE_REQUEST, 'events');
const STATUS = property(UPDATE_REQUEST, 'status');
const SECRET: SchemaObject = {
  type: 'string',
  pattern: '^whsec_[A-Za-z0-9+/]+=*$',
  description: 'The Standard Webhooks signing secret: `whsec_` + base64 key.',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

const summary: SchemaObject = {
  type: 'object',
  required: ['id', 'endpoint', 'events', 'status', 'created_at'],
  properties: { id: UUID, endpoint: ENDPOINT, events: nullable(EVENTS), status: STATUS, created_at: REST_TIMESTAMP },
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
    http_status_code: { ...nullable({ type: 'integer' }, 'Null when no response came (refused address, timeout, connection error).'), example: 500 },
    response: { type: 'string', description: 'The first KiB of the response body, or why there was no response.' },
    sent_at: REST_TIMESTAMP,
  },
};

export const WEBHOOK_SCHEMAS = {
  CreateWebhookRequest: CREATE_REQUEST,
  UpdateWebhookRequest: UPDATE_REQUEST,
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
  ApiPageQuery('item', { forwardOnly: true, cursor: { type: 'string', description: `An ${what}.` } });
