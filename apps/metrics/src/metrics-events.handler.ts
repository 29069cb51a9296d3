import { Injectable } from '@nestjs/common';
import { heraldEventSchema, JetStreamHandler, parsePayload } from '@herald/bus';
import { RollupsService } from '@herald/metrics';

/**
 * Every event of the region → its hour's rollup. The transport acks after this resolves (the
 * batch holding the event has committed); an invalid event is terminated, a database error naks
 * it, and a redelivered or replayed event is not counted twice.
 */
@Injectable()
export class MetricsEventsHandler implements JetStreamHandler {
  constructor(private readonly rollups: RollupsService) {}

  async handle(payload: unknown): Promise<void> {
    await this.rollups.count(parsePayload(heraldEventSchema, payload, 'event'));
  }
}
