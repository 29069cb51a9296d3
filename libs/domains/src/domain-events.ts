import { Injectable } from '@nestjs/common';
import type { HeraldEvent } from '@herald/bus';
import type { Transaction } from '@herald/database';
import { ResourceEventOutbox } from '@herald/outbox';
import { heraldClock, isoTimestamp, newId } from '@herald/core';
import { domainEventData } from './domain.presenter';
import type { Domain } from './domain.types';
import { DomainsRepository } from './domains.repository';

export type DomainEventType = 'domain.created' | 'domain.updated' | 'domain.deleted';

/** The event envelope for a domain fact: the domain as it is now (or was, when deleted). */
export function domainEvent(type: DomainEventType, domain: Domain, at: Date = heraldClock.now()): HeraldEvent {
  return { id: newId(), type, created_at: isoTimestamp(at), team_id: domain.teamId, data: domainEventData(domain) };
}

/** A domain event recorded in a transaction, to publish once it has committed. */
export interface RecordedDomainEvent {
  region: string;
  event: HeraldEvent;
}

/** What a change of domains answers: its result, and the domain to announce (null: no event). */
export interface DomainChange<T> {
  result: T;
  announce: Domain | null;
}

/**
 * Domain events, for the events stream of the domain's region, where the webhooks dispatcher
 * and other consumers read them. They go through the resource event outbox: recorded in the
 * transaction of the change, published after the commit, relayed if that publish is lost.
 */
@Injectable()
export class DomainEvents {
  constructor(
    private readonly domains: DomainsRepository,
    private readonly outbox: ResourceEventOutbox,
  ) {}

  /**
   * Runs `change` in a transaction that also records the event of the domain it announces, and
   * publishes that event after the commit. A failure to record rolls the change back.
   */
  async change<T>(type: DomainEventType, change: (tx: Transaction) => Promise<DomainChange<T>>): Promise<T> {
    const { result, recorded } = await this.domains.transaction(async (tx) => {
      const { result, announce } = await change(tx);
      return { result, recorded: announce ? await this.record(tx, type, announce) : null };
    });
    await this.publish(recorded);
    return result;
  }

  /** Records the event in `tx`, the transaction of the change: both commit, or neither. */
  async record(tx: Transaction, type: DomainEventType, domain: Domain): Promise<RecordedDomainEvent> {
    const event = domainEvent(type, domain);
    await this.outbox.record(tx, domain.region, [event]);
    return { region: domain.region, event };
  }

  /**
   * Called after the commit, and never throws: the change stands whether or not its event could
   * be published now, and failing the request would make the client retry a change that already
   * happened. A lost publish is left to the outbox's relay.
   */
  async publish(recorded: RecordedDomainEvent | null): Promise<void> {
    if (recorded) await this.outbox.publish(recorded.region, [recorded.event]);
  }
}
