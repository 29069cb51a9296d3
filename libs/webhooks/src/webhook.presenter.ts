import { restTimestamp } from '@herald/core';
import type { Webhook } from './webhook.types';

/* Resend's wire shapes for webhooks. */

/** One item of GET /webhooks: without the secret (as the SDK's `Webhook` type). */
export function presentWebhookSummary(webhook: Webhook) {
  return {
    id: webhook.id,
    endpoint: webhook.endpoint,
    events: webhook.events,
    status: webhook.status,
    created_at: restTimestamp(webhook.createdAt) as string,
  };
}

/** GET /webhooks/:id. */
export function presentWebhook(webhook: Webhook) {
  return { object: 'webhook' as const, ...presentWebhookSummary(webhook), signing_secret: webhook.signingSecret };
}

/** POST /webhooks and POST /webhooks/:id/signing-secret/rotate. */
export function presentWebhookSecret(webhook: Webhook) {
  return { object: 'webhook' as const, id: webhook.id, signing_secret: webhook.signingSecret };
}
