import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { createApiKeyBody, updateApiKeyBody } from '@herald/accounts';
import type { HeraldErrorCode } from '@herald/core';
import type { EmailEvent, SendLimits } from '@herald/emails';
import type { DomainSchemaName } from './domains.schemas';
import { jsonSchemaOf } from './zod-schema';

/*
 * The component schemas of /openapi.json, as plain JSON-schema objects: request bodies are
 * validated by zod functions (libs/emails/src/validation), not DTO classes, so Nest cannot
 * reflect them. They follow OpenAPI 3.1 (JSON Schema 2020-12: `type: [T, 'null']`). Limits come from the deployment's config, so a self-hosted document tells the truth.
 */

export type SchemaName = CoreSchemaName | DomainSchemaName;

type CoreSchemaName =
  | 'SendEmailRequest'
  | 'BatchEmail'
  | 'SendBatchRequest'
  | 'SendEmailResponse'
  | 'SendBatchResponse'
  | 'Tag'
  | 'Attachment'
  | 'Email'
  | 'EmailListItem'
  | 'EmailList'
  | 'UpdateEmailRequest'
  | 'EmailReference'
  | 'CreateApiKeyRequest'
  | 'CreateApiKeyResponse'
  | 'UpdateApiKeyRequest'
  | 'ApiKey'
  | 'ApiKeyList'
  | 'ApiKeyReference'
  | 'DeletedApiKey'
  | 'Error'
  | 'Readiness';

export const schemaRef = (name: SchemaName): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

const LAST_EVENTS = [
  'queued', 'scheduled', 'canceled', 'sent', 'delivered', 'delivery_delayed',
  'bounced', 'complained', 'opened', 'clicked', 'failed', 'suppressed',
] as const satisfies readonly EmailEvent[];

/** The `name`s httpErrorFor (libs/http) can answer with: the codes it does not rename. */
type ErrorName = Exclude<
  HeraldErrorCode,
  | 'forbidden_from_domain'
  | 'invalid_scheduled_at'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'request_timeout'
  | 'malformed_request'
  | 'method_not_implemented'
>;
export const ERROR_NAMES = [
  'missing_api_key', 'restricted_api_key', 'invalid_api_key', 'validation_error', 'missing_required_field',
  'invalid_parameter', 'invalid_attachment', 'invalid_from_address', 'invalid_access', 'invalid_region',
  'invalid_idempotency_key', 'invalid_idempotent_request', 'concurrent_idempotent_requests', 'not_found',
  'method_not_allowed', 'daily_quota_exceeded', 'monthly_quota_exceeded', 'rate_limit_exceeded',
  'service_unavailable', 'application_error',
] as const satisfies readonly ErrorName[];

// A new event or error code fails to compile here until the document lists it too.
type ListsAll<Missing> = [Missing] extends [never] ? true : false;
type Assert<T extends true> = T;
type DocumentedEnums = Assert<ListsAll<Exclude<EmailEvent, (typeof LAST_EVENTS)[number]>>> &
  Assert<ListsAll<Exclude<ErrorName, (typeof ERROR_NAMES)[number]>>>;

const TAG_TEXT: SchemaObject = { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9_-]+$' };
export const UUID: SchemaObject = { type: 'string', format: 'uuid', example: '4ef9a417-02e9-4d39-ad75-9611e0fcc33c' };
export const REST_TIMESTAMP: SchemaObject = {
  type: 'string',
  // Not `format: date-time`: generators would parse it as RFC 3339 and fail on the space and `+00`.
  pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d{6}\\+00$',
  description: 'UTC, in Resend\'s format `YYYY-MM-DD HH:MM:SS.ffffff+00` (not RFC 3339).',
  example: '2026-04-03 22:13:42.674981+00',
};
/** OpenAPI 3.1 (JSON Schema 2020-12) spells "or null" in `type`; Nest's SchemaObject still types it as one string. */
export const nullable = (schema: SchemaObject, description?: string): SchemaObject => ({
  ...schema,
  type: [schema.type, 'null'] as unknown as SchemaObject['type'],
  ...(description ? { description } : {}),
});
export const constant = (value: string): SchemaObject => ({ type: 'string', enum: [value], example: value });
const addresses: SchemaObject = { type: 'array', items: { type: 'string' }, example: ['jane@example.com'] };

function addressList(description: string, max: number, required = false): SchemaObject {
  return {
    description,
    oneOf: [
      { type: 'string', example: 'jane@example.com' },
      { type: 'array', items: { type: 'string' }, minItems: required ? 1 : 0, maxItems: max },
    ],
  };
}

function sendEmailRequest(limits: SendLimits): SchemaObject {
  const mb = Math.round((limits.maxEmailBytes / (1024 * 1024)) * 10) / 10;
  const each = 'A mailbox, `email@example.com` or `Name <email@example.com>`, or an array of them.';
  return {
    type: 'object',
    required: ['from', 'to', 'subject'],
    description:
      `One email. \`html\` or \`text\` (or both) is required. At most ${limits.maxRecipients} recipients across ` +
      `\`to\`, \`cc\` and \`bcc\`; the whole email, base64-encoded attachments included, at most ${mb} MB ` +
      `(${limits.maxEmailBytes} bytes). Unknown fields are ignored; \`template\` and \`topic_id\` are not supported yet.`,
    properties: {
      from: {
        type: 'string',
        description: 'The sender: `email@example.com` or `Name <email@example.com>`.',
        example: 'Acme <onboarding@example.com>',
      },
      to: addressList(`${each} At most ${limits.maxRecipients}.`, limits.maxRecipients, true),
      subject: { type: 'string', description: 'Line breaks are folded into spaces.', example: 'Hello world' },
      cc: addressList(each, limits.maxRecipients),
      bcc: addressList(each, limits.maxRecipients),
      reply_to: addressList(each, limits.maxRecipients),
      html: { type: 'string', example: '<p>It works!</p>' },
      text: {
        type: 'string',
        description: 'The plain-text part. Send `""` to opt out of the text derived from `html`.',
        example: 'It works!',
      },
      headers: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          'Custom MIME headers, name to single-line value. Addressing, MIME and signature headers are set by Herald ' +
          'and refused here.',
        example: { 'X-Entity-Ref-ID': '123456789' },
      },
      attachments: { type: 'array', items: schemaRef('Attachment') },
      tags: { type: 'array', items: schemaRef('Tag'), maxItems: 75, description: 'At most 75 tags.' },
      scheduled_at: {
        type: 'string',
        description:
          `Send later: ISO 8601 (\`2026-08-05T11:52:01.858Z\`; no zone means UTC) or natural language ` +
          `(\`in 1 min\`, \`in 2 hours\`, \`tomorrow at 9am\`), at most ${limits.maxScheduleDays} days ahead.`,
        example: 'in 1 hour',
      },
    },
    example: {
      from: 'Acme <onboarding@example.com>',
      to: ['delivered@example.com'],
      subject: 'Hello world',
      html: '<p>It works!</p>',
      text: 'It works!',
      headers: { 'X-Entity-Ref-ID': '123456789' },
      attachments: [{ filename: 'hello.txt', content: 'SGVsbG8sIHdvcmxkIQ==' }],
      tags: [{ name: 'category', value: 'confirm_email' }],
    },
  };
}

/** A batch item is a send request without attachments. */
function batchEmail(send: SchemaObject): SchemaObject {
  const { attachments: _, ...properties } = send.properties ?? {};
  const { attachments: __, ...example } = send.example as Record<string, unknown>;
  return {
    ...send,
    description: `${send.description} Attachments are not supported in a batch.`,
    properties,
    example,
  };
}

const emailSummaryProperties: Record<string, SchemaObject | ReferenceObject> = {
  id: UUID,
  to: addresses,
  from: { type: 'string', example: 'Acme <onboarding@example.com>' },
  created_at: REST_TIMESTAMP,
  subject: { type: 'string', example: 'Hello world' },
  bcc: nullable(addresses),
  cc: nullable(addresses),
  reply_to: nullable(addresses),
  last_event: { type: 'string', enum: [...LAST_EVENTS], example: 'delivered' },
  scheduled_at: nullable(REST_TIMESTAMP, 'When a scheduled email is (or was) due; null when sent right away.'),
  message_id: {
    type: 'string',
    description: 'The `Message-ID` header of the email.',
    example: '<4ef9a417-02e9-4d39-ad75-9611e0fcc33c@example.com>',
  },
};
const emailSummaryRequired = Object.keys(emailSummaryProperties);

export const list = (item: SchemaName): SchemaObject => ({
  type: 'object',
  required: ['object', 'has_more', 'data'],
  properties: { object: constant('list'), has_more: { type: 'boolean' }, data: { type: 'array', items: schemaRef(item) } },
});
export const reference = (object: string): SchemaObject => ({
  type: 'object',
  required: ['object', 'id'],
  properties: { object: constant(object), id: UUID },
});

/** Every component schema but the domains' (./domains.schemas). */
export function componentSchemas(limits: SendLimits): Record<CoreSchemaName, SchemaObject> {
  const send = sendEmailRequest(limits);
  const batch = batchEmail(send);
  return {
    SendEmailRequest: send,
    BatchEmail: batch,
    SendBatchRequest: {
      type: 'array',
      items: schemaRef('BatchEmail'),
      minItems: 1,
      maxItems: limits.maxBatchSize,
      description: `1 to ${limits.maxBatchSize} emails, without attachments.`,
      example: [batch.example],
    },
    SendEmailResponse: { type: 'object', required: ['id'], properties: { id: UUID } },
    SendBatchResponse: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'array',
          items: schemaRef('SendEmailResponse'),
          description: 'Strict mode: one id per email, in input order. Permissive mode: the accepted emails only, in input order.',
        },
        errors: {
          type: 'array',
          description: 'Permissive mode only: the rejected emails, by index in the request.',
          items: {
            type: 'object',
            required: ['index', 'message'],
            properties: { index: { type: 'integer', minimum: 0 }, message: { type: 'string' } },
          },
        },
      },
    },
    Tag: {
      type: 'object',
      required: ['name', 'value'],
      properties: { name: TAG_TEXT, value: TAG_TEXT },
      example: { name: 'category', value: 'confirm_email' },
    },
    Attachment: {
      type: 'object',
      description: 'Exactly one of `content` and `path`.',
      properties: {
        content: {
          description: 'The file: a base64 string, an array of bytes, or a JSON-serialized Node.js Buffer.',
          oneOf: [
            { type: 'string', format: 'byte' },
            { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } },
            {
              type: 'object',
              required: ['type', 'data'],
              properties: { type: constant('Buffer'), data: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } } },
            },
          ],
        },
        filename: { type: 'string', example: 'invoice.pdf' },
        path: { type: 'string', format: 'uri', description: 'An http(s) URL Herald fetches the file from.' },
        content_type: { type: 'string', description: 'Guessed from the filename when absent.', example: 'application/pdf' },
        content_id: { type: 'string', maxLength: 127, description: 'Makes the attachment inline, referenced as `cid:<content_id>`.' },
      },
    },
    Email: {
      type: 'object',
      required: ['object', ...emailSummaryRequired, 'html', 'text', 'tags', 'headers', 'topic_id'],
      properties: {
        object: constant('email'),
        ...emailSummaryProperties,
        html: nullable({ type: 'string' }),
        text: nullable({ type: 'string' }),
        tags: { type: 'array', items: schemaRef('Tag') },
        headers: nullable({ type: 'object', additionalProperties: { type: 'string' } }),
        topic_id: nullable({ type: 'string' }, 'Always null: topics are not supported yet.'),
      },
    },
    EmailListItem: { type: 'object', required: emailSummaryRequired, properties: emailSummaryProperties },
    EmailList: list('EmailListItem'),
    UpdateEmailRequest: {
      type: 'object',
      required: ['scheduled_at'],
      properties: {
        scheduled_at: { ...send.properties!['scheduled_at'], description: 'The new time, in the forms `scheduled_at` accepts on send.' },
      },
    },
    EmailReference: reference('email'),
    CreateApiKeyRequest: jsonSchemaOf(createApiKeyBody),
    CreateApiKeyResponse: {
      type: 'object',
      required: ['id', 'object', 'token'],
      properties: {
        id: UUID,
        object: constant('api_key'),
        token: { type: 'string', description: 'The key itself (`hr_...`). Shown only in this response.', example: 'hr_...' },
      },
    },
    UpdateApiKeyRequest: jsonSchemaOf(updateApiKeyBody),
    ApiKey: {
      type: 'object',
      required: ['id', 'name', 'created_at', 'last_used_at'],
      properties: {
        id: UUID,
        name: { type: 'string', example: 'Production' },
        created_at: REST_TIMESTAMP,
        last_used_at: nullable(REST_TIMESTAMP),
      },
    },
    ApiKeyList: list('ApiKey'),
    ApiKeyReference: reference('api_key'),
    DeletedApiKey: {
      type: 'object',
      required: ['object', 'id', 'deleted'],
      properties: { object: constant('api_key'), id: UUID, deleted: { type: 'boolean', enum: [true] } },
    },
    Error: {
      type: 'object',
      required: ['statusCode', 'name', 'message'],
      description: "Resend's error body; `message` is for people, `name` for code.",
      properties: {
        statusCode: { type: 'integer', example: 422 },
        name: { type: 'string', enum: [...ERROR_NAMES], example: 'validation_error' },
        message: {
          type: 'string',
          example: 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
        },
      },
    },
    Readiness: {
      type: 'object',
      required: ['status', 'checks'],
      properties: {
        status: { type: 'string', enum: ['ok', 'degraded', 'unavailable'] },
        checks: {
          type: 'object',
          additionalProperties: { type: 'string', enum: ['up', 'degraded', 'down'] },
          example: { postgres: 'up', redis: 'up', nats: 'up' },
        },
      },
    },
  };
}
