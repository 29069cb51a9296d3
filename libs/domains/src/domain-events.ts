import { Injectable, Logger } from '@nestjs/common';
import { EventPublisher, type HeraldEvent } from '@herald/bus';
import { isoTimestamp, newId } from '@herald/core';
import { domainEventData } from './domain.presenter';
import type { Domain } from './domain.types';

export type DomainEventType = 'domain.created' | 'domain.updated' | 'domain.deleted';

/** The event envelope for a domain fact: the domain as it is now (or was, when deleted). */
export function domainEvent(type: DomainEventType, domain: Domain, at: Date = new Date()): HeraldEvent {
  return { id: newId(), type, created_at: isoTimestamp(at), team_id: domain.teamId, data: domainEventData(domain) };
}

/**
 * Publishes domain events on the events stream of the domain's region, where the webhooks
 * dispatcher and other consumers read them.
 */
@Injectable()
export class DomainEvents {
  private readonly logger = new Logger(DomainEvents.name);

  constructor(private readonly events: EventPublisher) {}

  /**
   * Called after the change is committed, and never throws: the change stands whether or not
   * its event could be published, and failing the request would make the client retry a change
   * that already happened (a retried create would meet "registered already"). A lost event is
   * logged; there is no outbox to publish it again.
   */
  async publishDomainEvent(type: DomainEventType, domain: Domain): Promise<void> {
    const event = domainEvent(type, domain);
    try {
      await this.events.publish(domain.region, event);
    } catch (error) {
      this.logger.error(`could not publish ${type} ${event.id} for domain ${domain.id}: ${String(error)}`);
    }
  }
}
