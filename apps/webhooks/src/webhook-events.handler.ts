import { Controller, UseFilters } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { heraldEventSchema, JetStreamExceptionFilter, parsePayload } from '@herald/bus';
import { WebhookFanOutService } from '@herald/webhooks';

/** The `@EventPattern` the events consumer delivers to. */
export const WEBHOOK_EVENTS_PATTERN = 'webhook-events';

/**
 * Every event of the region → one webhook message per subscribed endpoint. The transport acks
 * after this resolves (the insert has committed); an invalid event is terminated, a database
 * error naks it for redelivery, and redelivery makes no second message.
 */
@Controller()
@UseFilters(JetStreamExceptionFilter)
export class WebhookEventsHandler {
  constructor(private readonly fanOut: WebhookFanOutService) {}

  @EventPattern(WEBHOOK_EVENTS_PATTERN)
  async handle(@Payload() payload: unknown): Promise<void> {
    await this.fanOut.fanOut(parsePayload(heraldEventSchema, payload, 'event'));
  }
}
