import { Injectable } from '@nestjs/common';
import { JetStreamHandler, parseEvents } from '@herald/bus';
import { RollupsService } from '@herald/metrics';

/**
 * Every event of the region (a message may carry several of one type) → its hour's rollup. The
 * transport acks after this resolves (the batch holding the events has committed); an invalid
 * message is terminated, a database error naks it, and a redelivered or replayed event is not
 * counted twice.
 */
@Injectable()
export class MetricsEventsHandler implements JetStreamHandler {
  constructor(private readonly rollups: RollupsService) {}

  async handle(payload: unknown): Promise<void> {
    await Promise.all(parseEvents(payload).map((event) => this.rollups.count(event)));
  }
}
