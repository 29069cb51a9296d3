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

const importCountsSchema = z.object({
  total: z
    .int()
    .min(0)
    .meta({ description: 'Rows of the file (the header aside), known from the upload; the other four add up to it once the import is done.' }),
  created: z.int().min(0),
  updated: z.int().min(0),
  skipped: z.int().min(0).meta({ description: 'Rows of an address that exists already (`on_conflict: skip`) or appears twice.' }),
  failed: z.int().min(0).meta({ description: 'Rows refused (see `rejected_rows`).' }),
});
const importStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']).meta({
  description:
    'The rows are written in the background: `queued` until a process takes the import, `in_progress` while its rows are written, then `completed` (or `failed`, after internal errors).',
});
export const contactImportSchema = z.object({
  object: z.literal('contact_import'),
  id: wireId,
  status: importStatus,
  created_at: wireTimestamp,
  completed_at: wireTimestamp.nullable(),
  counts: importCountsSchema,
});
export const contactImportDetailSchema = z.object({
  ...contactImportSchema.shape,
  rejected_rows: z
    .array(z.object({ line: z.int().min(2), email: z.string().nullable(), reason: z.string() }))
    .meta({ description: 'The rows the import did not take and why (the first 1,000); `line` counts the header as 1.' }),
});
export const contactImportListSchema = wireList(contactImportSchema);
export const contactImportReferenceSchema = z.object({ ...wireReference('contact_import').shape, status: importStatus });

/** The legacy /audiences objects: segments named `audience`. */
export const audienceSchema = z.object({ ...segmentSchema.shape, object: z.literal('audience') });
export const createdAudienceSchema = z.object({ ...createdSegmentSchema.shape, object: z.literal('audience') });
export const deletedAudienceSchema = z.object({ ...deletedSegmentSchema.shape, object: z.literal('audience') });
