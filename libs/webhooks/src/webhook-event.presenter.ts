import { z } from 'zod';
import { restTimestamp } from '@herald/core';
import { wireList, wireTimestamp } from '@herald/http';
import type { EventLogAttempt, EventLogEntry } from './webhook-event-log.repository';
import type { WebhookMessageStatus } from './webhook-messages.repository';

/* The wire shapes of a webhook's event log (GET /webhooks/:id/events…), each the zod schema its presenter answers. */

const EVENT_STATUSES = ['success', 'pending', 'failed', 'attempting'] as const satisfies readonly WebhookMessageStatus[];

/** The message ids webhook_messages hands out: `msg_` + 32 hex digits. */
export const MESSAGE_ID = /^msg_[0-9a-f]{32}$/;

export const webhookEventIdSchema = z.string().regex(MESSAGE_ID).meta({
  description: 'The webhook message id: the `webhook-id` / `svix-id` header of every delivery of it.',
  example: 'msg_0193a1b2c3d4e5f60718293a4b5c6d7e',
});

export const webhookEventLogItemSchema = z.object({
  id: webhookEventIdSchema,
  type: z.string().meta({ description: 'The event type, e.g. `email.delivered`.', example: 'email.delivered' }),
  created_at: wireTimestamp,
  status: z.enum(EVENT_STATUSES).meta({
    description: '`pending`: waiting for its next attempt; `attempting`: being delivered; `success`: a 2xx; `failed`: out of attempts, or a 410.',
  }),
});

export const webhookEventSchema = z.object({
  object: z.literal('webhook_event'),
  ...webhookEventLogItemSchema.shape,
  next_attempt_at: wireTimestamp.nullable().meta({ description: 'When the next attempt is due; null once delivered or failed.' }),
  payload: z
    .object({ type: z.string(), created_at: z.string().meta({ format: 'date-time' }), data: z.unknown() })
    .meta({ description: 'The body POSTed to the endpoint.' }),
});

export const webhookEventAttemptSchema = z.object({
  id: z.string().regex(/^\d+$/).meta({ example: '42' }),
  http_status_code: z
    .int()
    .nullable()
    .meta({ description: 'Null when no response came (refused address, timeout, connection error).', example: 500 }),
  response: z.string().meta({ description: 'The first KiB of the response body, or why there was no response.' }),
  sent_at: wireTimestamp,
});

export const webhookEventListSchema = wireList(webhookEventLogItemSchema);
export const webhookEventAttemptListSchema = wireList(webhookEventAttemptSchema);
export const webhookEventReferenceSchema = z.object({ object: z.literal('webhook_event'), id: webhookEventIdSchema });

export type WebhookEventLogItem = z.infer<typeof webhookEventLogItemSchema>;
export type WebhookEventBody = z.infer<typeof webhookEventSchema>;
export type WebhookEventList = z.infer<typeof webhookEventListSchema>;
export type WebhookEventAttemptList = z.infer<typeof webhookEventAttemptListSchema>;
export type WebhookEventReference = z.infer<typeof webhookEventReferenceSchema>;

function presentEntry(entry: EventLogEntry): WebhookEventLogItem {
  return { id: entry.id, type: entry.type, created_at: restTimestamp(entry.createdAt), status: entry.status };
}

export function presentEventEntry(entry: EventLogEntry): WebhookEventBody {
  return {
    object: 'webhook_event',
    ...presentEntry(entry),
    next_attempt_at: entry.status === 'pending' || entry.status === 'attempting' ? restTimestamp(entry.nextAttemptAt) : null,
    payload: entry.payload,
  };
}

export const presentEventList = (page: { items: EventLogEntry[]; hasMore: boolean }): WebhookEventList => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map(presentEntry),
});

export const presentAttemptList = (page: { items: EventLogAttempt[]; hasMore: boolean }): WebhookEventAttemptList => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map((attempt) => ({
    id: attempt.id,
    http_status_code: attempt.statusCode,
    // What the endpoint answered (its first KiB), or why there was no answer.
    response: attempt.statusCode === null ? (attempt.error ?? '') : attempt.responseExcerpt,
    sent_at: restTimestamp(attempt.sentAt),
  })),
});

export const presentEventReference = (id: string): WebhookEventReference => ({ object: 'webhook_event', id });
