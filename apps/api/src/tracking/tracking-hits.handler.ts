import { Injectable } from '@nestjs/common';
import { JetStreamHandler, parsePayload } from '@herald/bus';
import { decodeHits, TrackingRecorder, trackingHitsSchema } from '@herald/tracking';

/**
 * The region's tracking stream → `email.opened`/`email.clicked` events. The transport acks once
 * the transaction holding the message's hits has committed and their events are on the events
 * stream; an invalid message is terminated, a database or publish error naks it, and a redelivered
 * message records nothing twice.
 */
@Injectable()
export class TrackingHitsHandler implements JetStreamHandler {
  constructor(private readonly recorder: TrackingRecorder) {}

  async handle(payload: unknown): Promise<void> {
    await this.recorder.record(decodeHits(parsePayload(trackingHitsSchema, payload, 'tracking hits')));
  }
}
