import { Injectable } from '@nestjs/common';
import { JetStreamContext, JetStreamHandler, parsePayload, sendCommandSchema } from '@herald/bus';
import { DeliveryService } from '@herald/delivery';

/**
 * One send command → the sender pipeline. The command is acked as soon as the email's
 * recipients are claimed in Postgres: from then on the claim's lease (renewed while this worker
 * lives, run out when it dies) and the reconciler are responsible for it, so a worker that dies
 * mid-send holds no slot of the consumer. Before the claim, an invalid command is terminated and
 * a failure is redelivered.
 */
@Injectable()
export class SendHandler implements JetStreamHandler {
  constructor(private readonly delivery: DeliveryService) {}

  async handle(payload: unknown, ctx: JetStreamContext): Promise<void> {
    await this.delivery.handle(parsePayload(sendCommandSchema, payload, 'send command'), () => ctx.ack());
  }
}
