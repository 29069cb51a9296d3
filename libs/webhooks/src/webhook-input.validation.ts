import { HeraldError, isUuid } from '@herald/core';
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

export interface WebhookPage {
  limit: number;
  after: string | null;
  before: string | null;
}

const invalid = (message: string) => new HeraldError('validation_error', message);
const missing = (field: string) => new HeraldError('missing_required_field', `Missing \`${field}\` field.`);
const KNOWN = new Set<string>(WEBHOOK_EVENT_TYPES);

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

export function validateEndpoint(value: unknown, policy: EndpointPolicy): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid('The `endpoint` field must be a non-empty string.');
  const text = value.trim();
  if (text.length > MAX_ENDPOINT_LENGTH) throw invalid(`The \`endpoint\` field must be at most ${MAX_ENDPOINT_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('The `endpoint` field must be an absolute URL, like `https://example.com/webhooks`.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw invalid(policy.allowHttp ? 'The `endpoint` field must be an http or https URL.' : 'The `endpoint` field must be an https URL.');
  }
  if (url.username !== '' || url.password !== '') throw invalid('The `endpoint` field must not contain credentials.');
  if (url.hostname === '') throw invalid('The `endpoint` field must have a host.');
  if (!hostAllowed(url.hostname, policy.allowed)) {
    throw invalid('The `endpoint` field must not point to a private, loopback, link-local or metadata address.');
  }
  return url.href.length > MAX_ENDPOINT_LENGTH ? text : url.href;
}

export function validateEvents(value: unknown): WebhookEventType[] {
  if (!Array.isArray(value) || value.length === 0) throw invalid('The `events` field must be a non-empty array of event types.');
  for (const event of value) {
    if (typeof event !== 'string' || !KNOWN.has(event)) {
      throw invalid(`The \`events\` field contains an unknown event type: \`${String(event)}\`. Known types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
    }
  }
  return [...new Set(value as WebhookEventType[])];
}

export function validateCreateWebhook(body: unknown, policy: EndpointPolicy): CreateWebhookInput {
  const input = asObject(body);
  if (input['endpoint'] === undefined || input['endpoint'] === null) throw missing('endpoint');
  const endpoint = validateEndpoint(input['endpoint'], policy);
  if (input['events'] === undefined || input['events'] === null) throw missing('events');
  return { endpoint, events: validateEvents(input['events']) };
}

export function validateUpdateWebhook(body: unknown, policy: EndpointPolicy): UpdateWebhookInput {
  const input = asObject(body ?? {});
  const out: UpdateWebhookInput = {};
  if (input['endpoint'] !== undefined && input['endpoint'] !== null) out.endpoint = validateEndpoint(input['endpoint'], policy);
  if (input['events'] !== undefined && input['events'] !== null) out.events = validateEvents(input['events']);
  const status = input['status'];
  if (status !== undefined && status !== null) {
    if (typeof status !== 'string' || !(WEBHOOK_STATUSES as readonly string[]).includes(status)) {
      throw invalid('The `status` field must be `enabled` or `disabled`.');
    }
    out.status = status as WebhookStatus;
  }
  return out;
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** GET /webhooks: `limit` 1–100 (20 by default), at most one of `after` / `before` (webhook ids). */
export function validateWebhookListQuery(query: unknown): WebhookPage {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  let limit = DEFAULT_LIMIT;
  if (q['limit'] !== undefined && q['limit'] !== '') {
    const raw = q['limit'];
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
      throw invalid(`The pagination limit must be a number between 1 and ${MAX_LIMIT}.`);
    }
    limit = n;
  }
  const cursor = (name: 'after' | 'before'): string | null => {
    const value = q[name];
    if (value === undefined || value === null || value === '') return null;
    if (typeof value === 'string' && isUuid(value)) return value.toLowerCase();
    throw new HeraldError('invalid_parameter', `The \`${name}\` parameter must be a valid UUID.`);
  };
  const after = cursor('after');
  const before = cursor('before');
  if (after !== null && before !== null) throw invalid('The `after` and `before` parameters cannot be used together.');
  return { limit, after, before };
}
