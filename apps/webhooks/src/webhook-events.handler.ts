import { Injectable } from '@nestjs/common';
import { JetStreamHandler, parseEvents } from '@herald/bus';
import { WebhookFanOutService } from '@herald/webhooks';

/**
 * Every event of the region (a message may carry several of one type) → one webhook message per
 * subscribed endpoint. The transport acks after this resolves (the inserts have committed); an
 * invalid message is terminated, a database error naks it for redelivery, and redelivery makes no
 * second message.
 */
@Injectable()
export class WebhookEventsHandler implements JetStreamHandler {
  constructor(private readonly fanOut: WebhookFanOutService) {}

  async handle(payload: unknown): Promise<void> {
    await Promise.all(parseEvents(payload).map((event) => this.fanOut.fanOut(event)));
  }
}
