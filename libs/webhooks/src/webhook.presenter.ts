import { z } from 'zod';
import { restTimestamp } from '@herald/core';
import { wireDeleted, wireId, wireList, wireReference, wireTimestamp } from '@herald/http';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES, type Webhook } from './webhook.types';

/* Resend's wire shapes for webhooks, each the zod schema its presenter answers (/openapi.json is generated from them). */

const SECRET = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
  .meta({ description: 'The Standard Webhooks signing secret: `whsec_` + base64 key.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });

/** One item of GET /webhooks: without the secret (as the SDK's `Webhook` type). */
export const webhookSummarySchema = z.object({
  id: wireId,
  endpoint: z.string().meta({ format: 'uri', example: 'https://example.com/handler' }),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).meta({ description: 'The event types delivered to the endpoint.', example: ['email.sent'] }),
  status: z.enum(WEBHOOK_STATUSES),
  created_at: wireTimestamp,
});

export const webhookSchema = z.object({ object: z.literal('webhook'), ...webhookSummarySchema.shape, signing_secret: SECRET });
export const webhookSecretSchema = z.object({ object: z.literal('webhook'), id: wireId, signing_secret: SECRET });
export const webhookListSchema = wireList(webhookSummarySchema);
export const webhookReferenceSchema = wireReference('webhook');
export const deletedWebhookSchema = wireDeleted('webhook');

export type WebhookSummaryBody = z.infer<typeof webhookSummarySchema>;
export type WebhookBody = z.infer<typeof webhookSchema>;
export type WebhookSecretBody = z.infer<typeof webhookSecretSchema>;
export type WebhookList = z.infer<typeof webhookListSchema>;
export type WebhookReference = z.infer<typeof webhookReferenceSchema>;
export type DeletedWebhook = z.infer<typeof deletedWebhookSchema>;

export function presentWebhookSummary(webhook: Webhook): WebhookSummaryBody {
  return {
    id: webhook.id,
    endpoint: webhook.endpoint,
    events: webhook.events,
    status: webhook.status,
    created_at: restTimestamp(webhook.createdAt),
  };
}

/** GET /webhooks/:id. */
export function presentWebhook(webhook: Webhook): WebhookBody {
  return { object: 'webhook', ...presentWebhookSummary(webhook), signing_secret: webhook.signingSecret };
}

/** POST /webhooks and POST /webhooks/:id/signing-secret/rotate. */
export function presentWebhookSecret(webhook: Webhook): WebhookSecretBody {
  return { object: 'webhook', id: webhook.id, signing_secret: webhook.signingSecret };
}

export const presentWebhookList = (page: { items: Webhook[]; hasMore: boolean }): WebhookList => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map(presentWebhookSummary),
});

export const presentWebhookReference = (id: string): WebhookReference => ({ object: 'webhook', id });
export const presentDeletedWebhook = (id: string): DeletedWebhook => ({ object: 'webhook', id, deleted: true });
