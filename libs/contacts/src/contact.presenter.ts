import { restTimestamp } from '@herald/core';
import type { Contact, ContactProperty, ContactTopic, PropertyType, PropertyValue, Segment, Topic, TopicSubscription } from './contact.types';

/* Resend's wire shapes for contacts, segments, topics and contact properties (API.md §11, the SDK's types). */

export interface WireList<T> {
  object: 'list';
  has_more: boolean;
  data: T[];
}

export const wireList = <I, T>(page: { items: I[]; hasMore: boolean }, present: (item: I) => T): WireList<T> => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map(present),
});

/** A page cut from a short list held whole (a contact's topics or segments), by id cursor. */
export function pageOf<I extends { id: string }>(items: I[], page: { limit: number; after: string | null; before: string | null }) {
  let start = 0;
  let end = items.length;
  if (page.after) start = items.findIndex((i) => i.id === page.after) + 1 || items.length;
  if (page.before)
    end = Math.max(
      0,
      items.findIndex((i) => i.id === page.before),
    );
  if (page.before) start = Math.max(0, end - page.limit);
  const cut = items.slice(start, Math.min(end, start + page.limit));
  return { items: cut, hasMore: page.before ? start > 0 : start + cut.length < items.length };
}

export interface ContactListItem {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  created_at: string;
  unsubscribed: boolean;
}

export interface ContactBody extends ContactListItem {
  object: 'contact';
  properties: Record<string, { type: PropertyType; value: PropertyValue }>;
}

export function presentContactListItem(contact: Contact): ContactListItem {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    created_at: restTimestamp(contact.createdAt),
    unsubscribed: contact.unsubscribed,
  };
}

/** GET /contacts/:idOrEmail: the contact's values of the properties the team defines. */
export function presentContact(contact: Contact, definitions: Map<string, ContactProperty>): ContactBody {
  const properties: ContactBody['properties'] = {};
  for (const [key, value] of Object.entries(contact.properties)) {
    const definition = definitions.get(key);
    if (definition) properties[key] = { type: definition.type, value };
  }
  return { object: 'contact', ...presentContactListItem(contact), properties };
}

export const contactReference = (contact: { id: string }) => ({ object: 'contact' as const, id: contact.id });
export const deletedContact = (contact: { id: string }) => ({ object: 'contact' as const, contact: contact.id, deleted: true as const });

export interface SegmentBody {
  object: 'segment';
  id: string;
  name: string;
  created_at: string;
}

export const presentSegment = (segment: Segment): SegmentBody => ({
  object: 'segment',
  id: segment.id,
  name: segment.name,
  created_at: restTimestamp(segment.createdAt),
});
export const presentSegmentListItem = (segment: Segment) => ({ id: segment.id, name: segment.name, created_at: restTimestamp(segment.createdAt) });

export interface TopicBody {
  object: 'topic';
  id: string;
  name: string;
  description: string | null;
  default_subscription: TopicSubscription;
  visibility: Topic['visibility'];
  created_at: string;
}

export const presentTopic = (topic: Topic): TopicBody => ({
  object: 'topic',
  id: topic.id,
  name: topic.name,
  description: topic.description,
  default_subscription: topic.defaultSubscription,
  visibility: topic.visibility,
  created_at: restTimestamp(topic.createdAt),
});

/** An item of GET /contacts/:idOrEmail/topics. */
export const presentContactTopic = ({ topic, subscription }: ContactTopic) => ({
  id: topic.id,
  name: topic.name,
  description: topic.description,
  subscription,
});

export interface ContactPropertyBody {
  object: 'contact_property';
  id: string;
  key: string;
  type: PropertyType;
  fallback_value: PropertyValue | null;
  created_at: string;
}

export const presentContactProperty = (property: ContactProperty): ContactPropertyBody => ({
  object: 'contact_property',
  id: property.id,
  key: property.key,
  type: property.type,
  fallback_value: property.fallbackValue,
  created_at: restTimestamp(property.createdAt),
});
