import { Injectable } from '@nestjs/common';
import { HeraldError, isUuid, restTimestamp } from '@herald/core';
import { parsePage } from '@herald/http';
import { EventLogAttempt, EventLogEntry, LogPage, WebhookEventLogRepository } from './webhook-event-log.repository';
import { WebhooksRepository } from './webhooks.repository';

/** The message ids webhook_messages hands out: `msg_` + 32 hex digits. */
const MESSAGE_ID = /^msg_[0-9a-f]{32}$/;

const webhookNotFound = () => new HeraldError('not_found', 'Webhook not found');
const eventNotFound = () => new HeraldError('not_found', 'Webhook event not found');

/** `limit` 1–100 (20 by default) and an `after` cursor that `cursorOk` accepts: the log pages one way. */
export function validateLogPage(query: unknown, cursorOk: (value: string) => boolean, cursorName: string): LogPage {
  const cursor = { valid: cursorOk, described: cursorName, normalize: (value: string) => value };
  const { limit, after } = parsePage(query, { cursor, forwardOnly: true, blankLimitIsDefault: true });
  return { limit, after };
}

function presentEntry(entry: EventLogEntry) {
  return { id: entry.id, type: entry.type, created_at: restTimestamp(entry.createdAt) as string, status: entry.status };
}

function presentAttempt(attempt: EventLogAttempt) {
  return {
    id: attempt.id,
    http_status_code: attempt.statusCode,
    // What the endpoint answered (its first KiB), or why there was no answer.
    response: attempt.statusCode === null ? (attempt.error ?? '') : attempt.responseExcerpt,
    sent_at: restTimestamp(attempt.sentAt) as string,
  };
}

/**
 * The event log of a webhook (GET /webhooks/:id/events…): one entry per webhook message, whose
 * id is the `webhook-id` / `svix-id` the receiver saw, and replay of any of them.
 */
@Injectable()
export class WebhookEventsService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly log: WebhookEventLogRepository,
  ) {}

  async list(teamId: string, webhookId: string, query: unknown) {
    await this.assertWebhook(teamId, webhookId);
    const page = validateLogPage(query, (v) => MESSAGE_ID.test(v), 'a webhook event id');
    const { items, hasMore } = await this.log.list(teamId, webhookId, page);
    return { object: 'list' as const, has_more: hasMore, data: items.map(presentEntry) };
  }

  async get(teamId: string, webhookId: string, eventId: string) {
    const entry = await this.find(teamId, webhookId, eventId);
    return {
      object: 'webhook_event' as const,
      ...presentEntry(entry),
      next_attempt_at: entry.status === 'pending' || entry.status === 'attempting' ? restTimestamp(entry.nextAttemptAt) : null,
      payload: entry.payload,
    };
  }

  async attempts(teamId: string, webhookId: string, eventId: string, query: unknown) {
    const page = validateLogPage(query, (v) => /^\d{1,18}$/.test(v), 'an attempt id');
    await this.find(teamId, webhookId, eventId);
    const { items, hasMore } = await this.log.attempts(eventId, page);
    return { object: 'list' as const, has_more: hasMore, data: items.map(presentAttempt) };
  }

  /**
   * Delivers the event again, now, under the same message id (receivers dedupe on it): a
   * delivered or failed one gets a fresh attempt budget; one being attempted right now is left
   * to that attempt. A disabled webhook's replay waits until the webhook is enabled.
   */
  async replay(teamId: string, webhookId: string, eventId: string) {
    this.assertIds(webhookId, eventId);
    await this.assertWebhook(teamId, webhookId);
    if ((await this.log.replay(teamId, webhookId, eventId)) === null) throw eventNotFound();
    return { object: 'webhook_event' as const, id: eventId };
  }

  private async find(teamId: string, webhookId: string, eventId: string): Promise<EventLogEntry> {
    this.assertIds(webhookId, eventId);
    await this.assertWebhook(teamId, webhookId);
    const entry = await this.log.get(teamId, webhookId, eventId);
    if (!entry) throw eventNotFound();
    return entry;
  }

  private assertIds(webhookId: string, eventId: string): void {
    if (!isUuid(webhookId)) throw new HeraldError('invalid_parameter', 'The `id` must be a valid UUID.');
    if (!MESSAGE_ID.test(eventId)) throw new HeraldError('invalid_parameter', 'The `event_id` must be a webhook event id (`msg_…`).');
  }

  private async assertWebhook(teamId: string, webhookId: string): Promise<void> {
    if (!isUuid(webhookId)) throw new HeraldError('invalid_parameter', 'The `id` must be a valid UUID.');
    if (!(await this.webhooks.get(teamId, webhookId))) throw webhookNotFound();
  }
}
