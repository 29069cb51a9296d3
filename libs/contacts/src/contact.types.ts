export type TopicSubscription = 'opt_in' | 'opt_out';
export const TOPIC_SUBSCRIPTIONS = ['opt_in', 'opt_out'] as const satisfies readonly TopicSubscription[];

export type TopicVisibility = 'public' | 'private';
export const TOPIC_VISIBILITIES = ['public', 'private'] as const satisfies readonly TopicVisibility[];

export type PropertyType = 'string' | 'number';
export const PROPERTY_TYPES = ['string', 'number'] as const satisfies readonly PropertyType[];

export type PropertyValue = string | number;

export interface Contact {
  id: string;
  teamId: string;
  /** The bare address, lowercased. */
  email: string;
  firstName: string | null;
  lastName: string | null;
  /** A global opt-out: no broadcast reaches the contact, whatever its topics say. */
  unsubscribed: boolean;
  /** The contact's own values, by property key (fallbacks are not applied here). */
  properties: Record<string, PropertyValue>;
  createdAt: Date;
  updatedAt: Date;
}

/** A contact with the segments it belongs to, as contact.* events describe it. */
export interface ContactWithSegments extends Contact {
  segmentIds: string[];
}

export interface ContactProperty {
  id: string;
  teamId: string;
  key: string;
  type: PropertyType;
  fallbackValue: PropertyValue | null;
  createdAt: Date;
}

export interface Segment {
  id: string;
  teamId: string;
  name: string;
  createdAt: Date;
}

export interface Topic {
  id: string;
  teamId: string;
  name: string;
  description: string | null;
  /** Immutable: `opt_in` reaches everyone who has not opted out, `opt_out` only those who opted in. */
  defaultSubscription: TopicSubscription;
  visibility: TopicVisibility;
  createdAt: Date;
  updatedAt: Date;
}

/** A topic and one contact's subscription to it (its explicit choice, else the topic's default). */
export interface ContactTopic {
  topic: Topic;
  subscription: TopicSubscription;
}

/**
 * One member of a segment, as a broadcast's fan-out reads it (ContactsService.segmentMembersPage).
 * `properties` holds every property the team defines: the contact's value, else the property's
 * fallback_value, else null. `topicSubscription` is the contact's subscription to the topic asked
 * about, resolved against the topic's default; null when no topic was asked about.
 */
export interface SegmentMember {
  contactId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  unsubscribed: boolean;
  properties: Record<string, PropertyValue | null>;
  topicSubscription: TopicSubscription | null;
}

/** A page request of the REST lists: newest first; `after` toward older rows, `before` toward newer. */
export interface ListPage {
  limit: number;
  after: string | null;
  before: string | null;
}

/** The dashboard's contact list adds a search: the start of the address (or any part, from 3 characters). */
export interface ContactListPage extends ListPage {
  search?: string;
  /** Only the members of this segment. */
  segmentId?: string;
}
