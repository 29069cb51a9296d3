import { Injectable } from '@nestjs/common';
import { heraldEventSchema, JetStreamHandler, parsePayload } from '@herald/bus';
import { WebhookFanOutService } from '@herald/webhooks';

/**
 * Every event of the region → one webhook message per subscribed endpoint. The transport acks
 * after this resolves (the insert has committed); an invalid event is terminated, a database
 * error naks it for redelivery, and redelivery makes no second message.
 */
@Injectable()
export class WebhookEventsHandler implements JetStreamHandler {
  constructor(private readonly fanOut: WebhookFanOutService) {}

  async handle(payload: unknown): Promise<void> {
    await this.fanOut.fanOut(parsePayload(heraldEventSchema, payload, 'event'));
  }
}
