import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { HeraldError, stableId } from '@herald/core';
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

/** Most events in one message of the events stream (an event is at most a few KB: well under NATS' 1 MB payload). */
export const EVENTS_PER_MESSAGE = 128;

const eventListSchema = z.array(heraldEventSchema).min(1).max(EVENTS_PER_MESSAGE);
/**
 * A message of the events stream: one event, or several of one type (`{ events: [...] }`, what
 * a producer of many events at once publishes: one stored message and one ack instead of one per
 * event). Consumers handle each event of a message alike, and key on the event's id.
 */
export const eventMessageSchema = z.union([heraldEventSchema, z.object({ events: eventListSchema })]);

/** The events a message of the events stream carries (validated; an invalid message is a validation_error). */
export function parseEvents(payload: unknown): HeraldEvent[] {
  const message = parsePayload(eventMessageSchema, payload, 'event');
  return 'events' in message ? message.events : [message];
}

/**
 * Publishes events to a region's events stream. The event id (or, for several in one message, an
 * id derived from theirs) is the Nats-Msg-Id, so a producer that retries after a lost ack does not
 * record the same fact twice.
 */
@Injectable()
export class EventPublisher {
  constructor(
    @Inject(BUS_CONFIG.token) private readonly config: BusConfig,
    private readonly jetstream: JetStreamPublisher,
  ) {}

  async publish(region: string, event: HeraldEvent): Promise<PublishResult> {
    this.checkRegion(region);
    const valid = parsePayload(heraldEventSchema, event, 'event');
    return this.jetstream.publish(eventSubject(this.config.NATS_NAMESPACE, region, valid.type), JSON.stringify(valid), valid.id);
  }

  /**
   * Publishes events of one type as one message (up to EVENTS_PER_MESSAGE; see eventMessageSchema).
   * Its Nats-Msg-Id derives from the events' ids, so publishing the same events again is stored once.
   */
  async publishMany(region: string, events: HeraldEvent[]): Promise<PublishResult> {
    this.checkRegion(region);
    const valid = parsePayload(eventListSchema, events, 'events');
    const type = valid[0]!.type;
    if (valid.some((e) => e.type !== type)) throw new HeraldError('validation_error', 'the events of one message must share their type');
    const subject = eventSubject(this.config.NATS_NAMESPACE, region, type);
    return this.jetstream.publish(subject, JSON.stringify({ events: valid }), stableId('events', ...valid.map((e) => e.id)));
  }

  private checkRegion(region: string): void {
    if (!this.config.HERALD_REGIONS.includes(region)) {
      throw new HeraldError('validation_error', `region "${region}" is not one of ${this.config.HERALD_REGIONS.join(', ')}`);
    }
  }
}
