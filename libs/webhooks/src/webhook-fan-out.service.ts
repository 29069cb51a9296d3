import { Injectable } from '@nestjs/common';
import { GroupCommit, isUuid } from '@herald/core';
import { FanOutEvent, WebhookMessagesRepository } from './webhook-messages.repository';

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
  private readonly listeners: (() => void)[] = [];
  /** Events arriving while a fan-out insert runs are inserted together by the next (one statement, one commit). */
  private readonly inserts: GroupCommit<FanOutEvent, number>;

  constructor(private readonly messages: WebhookMessagesRepository) {
    this.inserts = new GroupCommit({ maxInFlight: 2, maxItems: 256 }, (events) => this.messages.fanOutMany(events));
  }

  /** Called after a fan-out made new messages (the dispatcher of this process polls at once). */
  onFannedOut(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Idempotent: an event seen again makes no new message. Returns how many messages it made. */
  async fanOut(event: StreamEvent): Promise<number> {
    // Teams are uuids; an event of another tenant kind has no webhooks to reach.
    if (!isUuid(event.team_id)) return 0;
    const createdAt = new Date(event.created_at).toISOString();
    const made = await this.inserts.submit({
      id: event.id,
      teamId: event.team_id,
      type: event.type,
      payload: { type: event.type, created_at: createdAt, data: event.data },
    });
    if (made > 0) this.listeners.forEach((listener) => listener());
    return made;
  }
}
