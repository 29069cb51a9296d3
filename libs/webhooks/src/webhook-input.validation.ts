import { z } from 'zod';
import { fail, isAbsent, jsonObject, type PageRequest, parseOrThrow, parsePage } from '@herald/http';
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

const KNOWN = new Set<string>(WEBHOOK_EVENT_TYPES);

/** Absent (or null) passes as undefined; `required` makes it Resend's missing_required_field. */
const field = <T>(name: string, required: boolean, check: (value: unknown, ctx: z.RefinementCtx) => T) =>
  z.unknown().optional().transform((value, ctx): T | undefined => {
    if (!isAbsent(value)) return check(value, ctx);
    return required ? fail(ctx, `Missing \`${name}\` field.`, 'missing_required_field') : undefined;
  });

function endpoint(policy: EndpointPolicy) {
  return (value: unknown, ctx: z.RefinementCtx): string => {
    if (typeof value !== 'string' || value.trim() === '') return fail(ctx, 'The `endpoint` field must be a non-empty string.');
    const text = value.trim();
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

function events(value: unknown, ctx: z.RefinementCtx): WebhookEventType[] {
  if (!Array.isArray(value) || value.length === 0) return fail(ctx, 'The `events` field must be a non-empty array of event types.');
  const unknown = value.findIndex((event) => typeof event !== 'string' || !KNOWN.has(event));
  if (unknown !== -1) {
    const type = String(value[unknown]);
    return fail(ctx, `The \`events\` field contains an unknown event type: \`${type}\`. Known types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  }
  return [...new Set(value as WebhookEventType[])];
}

function status(value: unknown, ctx: z.RefinementCtx): WebhookStatus {
  if (typeof value === 'string' && (WEBHOOK_STATUSES as readonly string[]).includes(value)) return value as WebhookStatus;
  return fail(ctx, 'The `status` field must be `enabled` or `disabled`.');
}

/** The body of POST /webhooks. */
export const createWebhookSchema = (policy: EndpointPolicy) =>
  jsonObject.pipe(z.object({ endpoint: field('endpoint', true, endpoint(policy)), events: field('events', true, events) }));

/** The body of PATCH /webhooks/:id: every field optional; no body at all changes nothing. */
export const updateWebhookSchema = (policy: EndpointPolicy) =>
  z.preprocess(
    (body) => body ?? {},
    jsonObject.pipe(
      z.object({
        endpoint: field('endpoint', false, endpoint(policy)),
        events: field('events', false, events),
        status: field('status', false, status),
      }),
    ),
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
