import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { JetStreamPublisher } from './jetstream-publisher';
import { parsePayload } from './payload.schema';
import { PublishResult } from './send-publisher';
import { eventSubject, isSubjectTokens } from './subjects';
import { BUS_CONFIG, BusConfig } from './bus.config';

/** A fact about an email (or another resource), as consumers and webhooks receive it. */
export const heraldEventSchema = z.object({
  id: z.string().min(1).max(256),
  /** Dotted, like `email.sent`; it becomes the end of the subject. */
  type: z.string().max(128).refine(isSubjectTokens, 'must be dotted words like email.sent'),
  created_at: z.iso.datetime({ offset: true }),
  data: z.unknown(),
  team_id: z.string().min(1),
});

export type HeraldEvent = z.infer<typeof heraldEventSchema>;

/**
 * Publishes events to a region's events stream. The event id is the Nats-Msg-Id, so a producer
 * that retries after a lost ack does not record the same fact twice.
 */
@Injectable()
export class EventPublisher {
  constructor(
    @Inject(BUS_CONFIG.token) private readonly config: BusConfig,
    private readonly jetstream: JetStreamPublisher,
  ) {}

  async publish(region: string, event: HeraldEvent): Promise<PublishResult> {
    if (!this.config.HERALD_REGIONS.includes(region)) {
      throw new HeraldError('validation_error', `region "${region}" is not one of ${this.config.HERALD_REGIONS.join(', ')}`);
    }
    const valid = parsePayload(heraldEventSchema, event, 'event');
    return this.jetstream.publish(eventSubject(this.config.NATS_NAMESPACE, region, valid.type), JSON.stringify(valid), valid.id);
  }
}
