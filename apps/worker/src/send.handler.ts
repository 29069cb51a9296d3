import { Controller, UseFilters } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamContext, JetStreamExceptionFilter, parsePayload, sendCommandSchema } from '@herald/bus';
import { DeliveryService } from '@herald/delivery';

/** The `@EventPattern` the send consumer delivers to. */
export const SEND_PATTERN = 'send-email';

/**
 * One send command → the sender pipeline. The command is acked as soon as the email's
 * recipients are claimed in Postgres: from then on the claim's lease (renewed while this worker
 * lives, run out when it dies) and the reconciler are responsible for it, so a worker that dies
 * mid-send holds no slot of the consumer. Before the claim, an invalid command is terminated and
 * a failure is redelivered.
 */
@Controller()
@UseFilters(JetStreamExceptionFilter)
export class SendHandler {
  constructor(private readonly delivery: DeliveryService) {}

  @EventPattern(SEND_PATTERN)
  async handle(@Payload() payload: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    await this.delivery.handle(parsePayload(sendCommandSchema, payload, 'send command'), () => ctx.ack());
  }
}
