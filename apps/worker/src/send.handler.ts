import { Controller, UseFilters } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamExceptionFilter, parsePayload, sendCommandSchema } from '@herald/bus';
import { DeliveryService } from '@herald/delivery';

/** The `@EventPattern` the send consumer delivers to. */
export const SEND_PATTERN = 'send-email';

/**
 * One send command → the sender pipeline. The transport acks once the outcome is recorded; an
 * invalid command is terminated; a failure to record is redelivered, and the claim in Postgres
 * keeps the redelivery from sending again.
 */
@Controller()
@UseFilters(JetStreamExceptionFilter)
export class SendHandler {
  constructor(private readonly delivery: DeliveryService) {}

  @EventPattern(SEND_PATTERN)
  async handle(@Payload() payload: unknown): Promise<void> {
    await this.delivery.handle(parsePayload(sendCommandSchema, payload, 'send command'));
  }
}
