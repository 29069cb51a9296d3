import { Injectable } from '@nestjs/common';
import { isUuid } from '@herald/core';
import { WebhookMessagesRepository } from './webhook-messages.repository';

/** An event as the events stream carries it (heraldEventSchema in @herald/bus). */
export interface StreamEvent {
  id: string;
  type: string;
  created_at: string;
  data: unknown;
  team_id: string;
}

/** Turns an event into one webhook message per subscribed endpoint of its team. */
@Injectable()
export class WebhookFanOutService {
  constructor(private readonly messages: WebhookMessagesRepository) {}

  /** Idempotent: an event seen again makes no new message. Returns how many messages it made. */
  async fanOut(event: StreamEvent): Promise<number> {
    // Teams are uuids; an event of another tenant kind has no webhooks to reach.
    if (!isUuid(event.team_id)) return 0;
    const createdAt = new Date(event.created_at).toISOString();
    return this.messages.fanOut({
      id: event.id,
      teamId: event.team_id,
      type: event.type,
      payload: { type: event.type, created_at: createdAt, data: event.data },
    });
  }
}
