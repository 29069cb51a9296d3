import { z } from 'zod';
import { wireDeleted, wireId, wireList, wireReference, wireTimestamp } from '@herald/http';
import { PROPERTY_TYPES, TOPIC_SUBSCRIPTIONS, TOPIC_VISIBILITIES } from './contact.types';

/* Resend's wire shapes of contacts, segments, topics and contact properties, for /openapi.json (the presenters answer them). */

const email = z.string().meta({ format: 'email', description: 'The address, lowercased.', example: 'steve.wozniak@gmail.com' });
const propertyValue = z.union([z.string(), z.number()]);

export const contactListItemSchema = z.object({
  id: wireId,
  email,
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  created_at: wireTimestamp,
  unsubscribed: z.boolean().meta({ description: 'Opted out of every broadcast, whatever its topics say.' }),
});
export const contactSchema = z.object({
  object: z.literal('contact'),
  ...contactListItemSchema.shape,
  properties: z
    .record(z.string(), z.object({ type: z.enum(PROPERTY_TYPES), value: propertyValue }))
    .meta({ description: "The contact's values of the team's contact properties." }),
});
export const contactListSchema = wireList(contactListItemSchema);
export const contactReferenceSchema = wireReference('contact');
export const deletedContactSchema = z.object({ object: z.literal('contact'), contact: wireId, deleted: z.literal(true) });

export const segmentListItemSchema = z.object({ id: wireId, name: z.string(), created_at: wireTimestamp });
export const segmentSchema = z.object({ object: z.literal('segment'), ...segmentListItemSchema.shape });
export const createdSegmentSchema = z.object({ object: z.literal('segment'), id: wireId, name: z.string() });
export const segmentListSchema = wireList(segmentListItemSchema);
export const segmentReferenceSchema = wireReference('segment');
export const deletedSegmentSchema = wireDeleted('segment');
export const contactSegmentAddedSchema = z.object({ id: wireId.meta({ description: 'The segment.' }) });
export const contactSegmentRemovedSchema = z.object({ id: wireId.meta({ description: 'The segment.' }), deleted: z.literal(true) });

export const topicSchema = z.object({
  object: z.literal('topic'),
  id: wireId,
  name: z.string(),
  description: z.string().nullable(),
  default_subscription: z.enum(TOPIC_SUBSCRIPTIONS),
  visibility: z.enum(TOPIC_VISIBILITIES),
  created_at: wireTimestamp,
});
export const topicListSchema = wireList(topicSchema);
export const topicReferenceSchema = wireReference('topic');
export const deletedTopicSchema = wireDeleted('topic');
export const contactTopicSchema = z.object({
  id: wireId,
  name: z.string(),
  description: z.string().nullable(),
  subscription: z.enum(TOPIC_SUBSCRIPTIONS).meta({ description: "The contact's choice, else the topic's default." }),
});
export const contactTopicListSchema = wireList(contactTopicSchema);
export const contactTopicsUpdatedSchema = z.object({ id: wireId.meta({ description: 'The contact.' }) });

export const contactPropertySchema = z.object({
  object: z.literal('contact_property'),
  id: wireId,
  key: z.string(),
  type: z.enum(PROPERTY_TYPES),
  fallback_value: propertyValue.nullable(),
  created_at: wireTimestamp,
});
export const contactPropertyListSchema = wireList(contactPropertySchema);
export const contactPropertyReferenceSchema = wireReference('contact_property');
export const deletedContactPropertySchema = wireDeleted('contact_property');
