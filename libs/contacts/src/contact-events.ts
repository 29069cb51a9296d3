import { Injectable, Logger } from '@nestjs/common';
import type { HeraldEvent } from '@herald/bus';
import type { Transaction } from '@herald/database';
import { ResourceEventOutbox } from '@herald/outbox';
import { isoTimestamp, newId } from '@herald/core';
import type { ContactWithSegments, Topic } from './contact.types';
import { ContactsRepository } from './contacts.repository';

export type ContactEventType = 'contact.created' | 'contact.updated' | 'contact.deleted';
export type TopicEventType = 'topic.created' | 'topic.updated' | 'topic.deleted';

/** The `data` of contact.* events (API.md §9.4; ISO timestamps, as webhooks use). */
export function contactEventData(contact: ContactWithSegments) {
  return {
    id: contact.id,
    audience_id: contact.segmentIds[0] ?? null,
    segment_ids: contact.segmentIds,
    created_at: isoTimestamp(contact.createdAt),
    updated_at: isoTimestamp(contact.updatedAt),
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    unsubscribed: contact.unsubscribed,
  };
}

/** The `data` of topic.* events. */
export function topicEventData(topic: Topic, deleted = false) {
  return {
    id: topic.id,
    name: topic.name,
    description: topic.description,
    default_subscription: topic.defaultSubscription,
    deleted,
    created_at: isoTimestamp(topic.createdAt),
    updated_at: isoTimestamp(topic.updatedAt),
  };
}

/** One fact to announce. */
export type ContactFact =
  | { type: ContactEventType; contact: ContactWithSegments }
  | { type: 'contact.topics.updated'; email: string; topics: { id: string; subscription: string }[] }
  | { type: TopicEventType; topic: Topic };

export function contactFactEvent(teamId: string, fact: ContactFact, at: Date = new Date()): HeraldEvent {
  const data =
    'contact' in fact
      ? contactEventData(fact.contact)
      : 'topic' in fact
        ? topicEventData(fact.topic, fact.type === 'topic.deleted')
        : { email: fact.email, topics: fact.topics };
  return { id: newId(), type: fact.type, created_at: isoTimestamp(at), team_id: teamId, data };
}

/** What a change answers: its result, and the facts to announce. */
export interface ContactChange<T> {
  result: T;
  announce: ContactFact[];
}

/**
 * Contact and topic events, for the events stream of the team's home region, through the
 * resource event outbox: recorded in the change's own transaction, published after the commit,
 * relayed if that publish is lost. Imports announce nothing (Resend emits no contact events for
 * CSV imports).
 */
@Injectable()
export class ContactEvents {
  private readonly logger = new Logger(ContactEvents.name);

  constructor(
    private readonly outbox: ResourceEventOutbox,
    private readonly repository: ContactsRepository,
  ) {}

  /** Runs `change` in a new transaction that also records its events, and publishes them after the commit. */
  async change<T>(teamId: string, change: (tx: Transaction) => Promise<ContactChange<T>>, homeRegion?: string): Promise<T> {
    const { result, publish } = await this.repository.transaction((tx) => this.changeWithin(tx, teamId, change, homeRegion));
    await publish();
    return result;
  }

  /** Publishes events a statement recorded in the outbox itself (after its commit); never rejects, the relay covers a failure. */
  publishRecorded(region: string, events: HeraldEvent[]): Promise<void> {
    return this.outbox.publish(region, events);
  }

  /** The same in the caller's transaction `tx`; `publish` is for after its commit. */
  async changeWithin<T>(
    tx: Transaction,
    teamId: string,
    change: (tx: Transaction) => Promise<ContactChange<T>>,
    homeRegion?: string,
  ): Promise<{ result: T; publish: () => Promise<void> }> {
    const { result, announce } = await change(tx);
    if (!announce.length) return { result, publish: async () => undefined };
    const region = homeRegion ?? (await this.repository.teamHomeRegion(teamId, tx));
    if (!region) {
      this.logger.error(`team ${teamId} has no home region: its ${announce.map((f) => f.type).join(', ')} events are not recorded`);
      return { result, publish: async () => undefined };
    }
    const events = announce.map((fact) => contactFactEvent(teamId, fact));
    await this.outbox.record(tx, region, events);
    return { result, publish: () => this.outbox.publish(region, events) };
  }
}
