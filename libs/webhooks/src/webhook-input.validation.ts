import { z } from 'zod';
import { checkedFirst, fail, jsonBody, optional, type PageRequest, parseOrThrow, parsePage, required } from '@herald/http';
import { type AddressAllowList, hostAllowed } from './endpoint-address';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES, type WebhookEventType, type WebhookStatus } from './webhook.types';

/*
 * The bodies of POST /webhooks and PATCH /webhooks/:id, problems reported one at a time as 422s
 * naming the field (`missing_required_field` for an absent required one, `validation_error`
 * otherwise). Unknown fields are ignored, as at Resend.
 */

export const MAX_ENDPOINT_LENGTH = 2048;

/** What the endpoint rules depend on (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOWED_ADDRESSES). */
export interface EndpointPolicy {
  /** http:// endpoints are accepted. */
  allowHttp: boolean;
  /** Private / loopback literal addresses (and `localhost`) accepted anyway. */
  allowed: AddressAllowList;
}

export interface CreateWebhookInput {
  endpoint: string;
  events: WebhookEventType[];
}

export interface UpdateWebhookInput {
  endpoint?: string;
  events?: WebhookEventType[];
  status?: WebhookStatus;
}

export type WebhookPage = PageRequest;

function checkEndpoint(policy: EndpointPolicy) {
  return (value: string, ctx: z.RefinementCtx): string => {
    const text = value.trim();
    if (text === '') return fail(ctx, 'The `endpoint` field must be a non-empty string.');
    if (text.length > MAX_ENDPOINT_LENGTH) return fail(ctx, `The \`endpoint\` field must be at most ${MAX_ENDPOINT_LENGTH} characters.`);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return fail(ctx, 'The `endpoint` field must be an absolute URL, like `https://example.com/webhooks`.');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
      return fail(ctx, policy.allowHttp ? 'The `endpoint` field must be an http or https URL.' : 'The `endpoint` field must be an https URL.');
    }
    if (url.username !== '' || url.password !== '') return fail(ctx, 'The `endpoint` field must not contain credentials.');
    if (url.hostname === '') return fail(ctx, 'The `endpoint` field must have a host.');
    if (!hostAllowed(url.hostname, policy.allowed)) {
      return fail(ctx, 'The `endpoint` field must not point to a private, loopback, link-local or metadata address.');
    }
    return url.href.length > MAX_ENDPOINT_LENGTH ? text : url.href;
  };
}

const endpoint = (policy: EndpointPolicy) =>
  z
    .string({ error: 'The `endpoint` field must be a non-empty string.' })
    .transform(checkEndpoint(policy))
    .meta({
      format: 'uri',
      maxLength: MAX_ENDPOINT_LENGTH,
      description:
        'An absolute https URL without credentials (http only where WEBHOOK_ALLOW_HTTP is on). Literal private, loopback, ' +
        'link-local and metadata IP addresses are refused unless WEBHOOK_ALLOWED_ADDRESSES lists them.',
      example: 'https://example.com/handler',
    });

const NOT_EVENTS = 'The `events` field must be a non-empty array of event types.';
const events = checkedFirst(
  (value, ctx) => {
    if (!Array.isArray(value) || value.length === 0) fail(ctx, NOT_EVENTS);
  },
  z
    .array(
      z.enum(WEBHOOK_EVENT_TYPES, {
        error: (issue) =>
          `The \`events\` field contains an unknown event type: \`${String(issue.input)}\`. Known types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      }),
    )
    .min(1),
)
  .transform((types) => [...new Set(types)])
  .meta({ description: 'The event types delivered to the endpoint.', example: ['email.sent', 'email.delivered'] });

const status = z.enum(WEBHOOK_STATUSES, { error: 'The `status` field must be `enabled` or `disabled`.' }).meta({ example: 'enabled' });

/** The body of POST /webhooks. */
export const createWebhookSchema = (policy: EndpointPolicy) =>
  jsonBody(
    z.object({
      endpoint: required(endpoint(policy), 'Missing `endpoint` field.'),
      events: required(events, 'Missing `events` field.'),
    }),
  );

/** The body of PATCH /webhooks/:id: every field optional; no body at all changes nothing. */
export const updateWebhookSchema = (policy: EndpointPolicy) =>
  z.preprocess(
    (body) => body ?? {},
    jsonBody(z.object({ endpoint: optional(endpoint(policy)), events: optional(events), status: optional(status) })),
  );

/** Throws the HeraldError of the first problem. */
export function validateCreateWebhook(body: unknown, policy: EndpointPolicy): CreateWebhookInput {
  return parseOrThrow(createWebhookSchema(policy), body) as CreateWebhookInput;
}

export function validateUpdateWebhook(body: unknown, policy: EndpointPolicy): UpdateWebhookInput {
  const parsed = parseOrThrow(updateWebhookSchema(policy), body);
  // Only the fields given, so the update leaves the others alone.
  return Object.fromEntries(Object.entries(parsed).filter(([, value]) => value !== undefined)) as UpdateWebhookInput;
}

/** GET /webhooks: `limit` 1–100 (20 by default), at most one of `after` / `before` (webhook ids). */
export function validateWebhookListQuery(query: unknown): WebhookPage {
  return parsePage(query, { blankLimitIsDefault: true });
}
