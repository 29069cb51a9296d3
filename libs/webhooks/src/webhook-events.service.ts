import { Injectable } from '@nestjs/common';
import { HeraldError, isUuid } from '@herald/core';
import { parsePage } from '@herald/http';
import {
  MESSAGE_ID,
  presentAttemptList,
  presentEventEntry,
  presentEventList,
  presentEventReference,
  type WebhookEventAttemptList,
  type WebhookEventBody,
  type WebhookEventList,
  type WebhookEventReference,
} from './webhook-event.presenter';
import { EventLogEntry, LogPage, WebhookEventLogRepository } from './webhook-event-log.repository';
import { WebhooksRepository } from './webhooks.repository';

const webhookNotFound = () => new HeraldError('not_found', 'Webhook not found');
const eventNotFound = () => new HeraldError('not_found', 'Webhook event not found');

/** `limit` 1–100 (20 by default) and an `after` cursor that `cursorOk` accepts: the log pages one way. */
export function validateLogPage(query: unknown, cursorOk: (value: string) => boolean, cursorName: string): LogPage {
  const cursor = { valid: cursorOk, described: cursorName, normalize: (value: string) => value };
  const { limit, after } = parsePage(query, { cursor, forwardOnly: true, blankLimitIsDefault: true });
  return { limit, after };
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

  async list(teamId: string, webhookId: string, query: unknown): Promise<WebhookEventList> {
    await this.assertWebhook(teamId, webhookId);
    const page = validateLogPage(query, (v) => MESSAGE_ID.test(v), 'a webhook event id');
    return presentEventList(await this.log.list(teamId, webhookId, page));
  }

  async get(teamId: string, webhookId: string, eventId: string): Promise<WebhookEventBody> {
    return presentEventEntry(await this.find(teamId, webhookId, eventId));
  }

  async attempts(teamId: string, webhookId: string, eventId: string, query: unknown): Promise<WebhookEventAttemptList> {
    const page = validateLogPage(query, (v) => /^\d{1,18}$/.test(v), 'an attempt id');
    await this.find(teamId, webhookId, eventId);
    return presentAttemptList(await this.log.attempts(eventId, page));
  }

  /**
   * Delivers the event again, now, under the same message id (receivers dedupe on it): a
   * delivered or failed one gets a fresh attempt budget; one being attempted right now is left
   * to that attempt. A disabled webhook's replay waits until the webhook is enabled.
   */
  async replay(teamId: string, webhookId: string, eventId: string): Promise<WebhookEventReference> {
    this.assertIds(webhookId, eventId);
    await this.assertWebhook(teamId, webhookId);
    if ((await this.log.replay(teamId, webhookId, eventId)) === null) throw eventNotFound();
    return presentEventReference(eventId);
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
