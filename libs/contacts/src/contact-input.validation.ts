import { z } from 'zod';
import { HeraldError, isUuid, parseAddress } from '@herald/core';
import { fieldName, isAbsent, isPlainObject, jsonBody, mustBe, optional, parseOrThrow, parsePage, required, typeError } from '@herald/http';
import { type ContactListPage, type ListPage, type PropertyValue, TOPIC_SUBSCRIPTIONS, type TopicSubscription } from './contact.types';

/*
 * The bodies and queries of /contacts, checked the way Resend reports problems: one at a time,
 * `missing_required_field` for an absent required field, `validation_error` (422) otherwise,
 * naming the field. Unknown fields are ignored. Whether properties, segments and topics exist
 * is the service's to check (it needs the team's definitions).
 */

export const MAX_NAME_LENGTH = 256;
export const MAX_PROPERTY_STRING = 2000;

/** A contact's address as stored: the bare address, lowercased; null when it is not one. */
export function normalizeContactEmail(value: string): string | null {
  const parsed = parseAddress(value);
  return parsed && parsed.display === null && parsed.address.length <= 320 ? parsed.address.toLowerCase() : null;
}

const invalidEmail = (field: string) => `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` format.`;

export const contactEmail = z
  .string({ error: typeError('a string') })
  .refine((value) => normalizeContactEmail(value) !== null, { error: (issue) => invalidEmail(fieldName(issue.path ?? [])) })
  .transform((value) => normalizeContactEmail(value) as string)
  .meta({ format: 'email', example: 'steve.wozniak@gmail.com' });

const name = z
  .string({ error: typeError('a string') })
  .max(MAX_NAME_LENGTH, { error: (issue) => mustBe(fieldName(issue.path ?? []), `at most ${MAX_NAME_LENGTH} characters`) })
  .transform((value) => value.trim() || null);

/** A name on update: a string, or null to clear it. */
const clearableName = z.preprocess((value) => (value === null ? '' : value), name.optional());

const uuid = z
  .string({ error: (issue) => mustBe(fieldName(issue.path ?? []), 'a valid UUID') })
  .refine(isUuid, { error: (issue) => mustBe(fieldName(issue.path ?? []), 'a valid UUID') })
  .transform((id) => id.toLowerCase())
  .meta({ format: 'uuid' });

const subscription = z.enum(TOPIC_SUBSCRIPTIONS, { error: (issue) => mustBe(fieldName(issue.path ?? []), '`opt_in` or `opt_out`') });

const propertyValue = z.union([z.string().max(MAX_PROPERTY_STRING), z.number().finite()], {
  error: (issue) => mustBe(fieldName(issue.path ?? []), `a string (at most ${MAX_PROPERTY_STRING} characters) or a number`),
});

/** `properties` on create: values are strings or numbers (null leaves a property unset). */
const createProperties = z.record(z.string(), propertyValue.nullable(), { error: (issue) => mustBe(fieldName(issue.path ?? []), 'an object') });
/** `properties` on update: null removes the contact's value. */
const updateProperties = createProperties;

export const segmentRefs = z.array(z.object({ id: required(uuid, 'Each segment needs an `id`.') }, { error: typeError('an object') }), {
  error: typeError('an array'),
});
export const topicRefs = z.array(
  z.object(
    {
      id: required(uuid, 'Each topic needs an `id`.'),
      subscription: required(subscription, 'Each topic needs a `subscription` (`opt_in` or `opt_out`).'),
    },
    { error: typeError('an object') },
  ),
  { error: typeError('an array') },
);

const createContactFields = z.object({
  email: required(contactEmail, 'The `email` field is required.'),
  first_name: optional(name),
  last_name: optional(name),
  unsubscribed: optional(z.boolean({ error: mustBe('unsubscribed', 'a boolean') })),
  properties: optional(createProperties),
  segments: optional(segmentRefs),
  topics: optional(topicRefs),
});

export const createContactBody = jsonBody(createContactFields).meta({
  example: { email: 'steve.wozniak@gmail.com', first_name: 'Steve', last_name: 'Wozniak', unsubscribed: false },
});

/** The same body on the legacy POST /audiences/:id/contacts, documented with its own example (the contact joins the path's segment). */
export const createAudienceContactBody = jsonBody(createContactFields).meta({
  description: 'A contact created in the segment of the path.',
  example: { email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace' },
});

export const updateContactBody = jsonBody(
  z.object({
    first_name: clearableName,
    last_name: clearableName,
    unsubscribed: optional(z.boolean({ error: mustBe('unsubscribed', 'a boolean') })),
    properties: optional(updateProperties),
  }),
).meta({ example: { first_name: 'Stephen', unsubscribed: true } });

/** PATCH /contacts/:idOrEmail/topics: a bare array of `{id, subscription}`, its items named as the SDK's `topics` option. */
/** The body as documented: the bare array. */
export const contactTopicsBody = topicRefs.meta({ example: [{ id: 'b6d24b8e-af0b-4c3c-be0c-359bbd97381e', subscription: 'opt_out' }] });

const updateContactTopicsBody = z.object({ topics: topicRefs.min(1, { error: 'The `topics` list must name at least one topic.' }) });

export interface CreateContactInput {
  email: string;
  firstName: string | null;
  lastName: string | null;
  unsubscribed: boolean;
  properties: Record<string, PropertyValue | null>;
  segmentIds: string[];
  topics: { id: string; subscription: TopicSubscription }[];
}

export interface UpdateContactInput {
  firstName?: string | null;
  lastName?: string | null;
  unsubscribed?: boolean;
  properties?: Record<string, PropertyValue | null>;
}

export function validateCreateContact(input: unknown): CreateContactInput {
  const body = parseOrThrow(createContactBody, input);
  return {
    email: body.email,
    firstName: body.first_name ?? null,
    lastName: body.last_name ?? null,
    unsubscribed: body.unsubscribed ?? false,
    properties: body.properties ?? {},
    segmentIds: [...new Set((body.segments ?? []).map((s) => s.id))],
    topics: dedupeTopics(body.topics ?? []),
  };
}

export function validateUpdateContact(input: unknown): UpdateContactInput {
  // The SDK sends `{}`-like bodies with every key absent when nothing changes: that is allowed.
  const body = parseOrThrow(updateContactBody, isAbsent(input) ? {} : input);
  const out: UpdateContactInput = {};
  if (body.first_name !== undefined) out.firstName = body.first_name;
  if (body.last_name !== undefined) out.lastName = body.last_name;
  if (body.unsubscribed !== undefined) out.unsubscribed = body.unsubscribed;
  if (body.properties !== undefined) out.properties = body.properties;
  return out;
}

export function validateUpdateContactTopics(input: unknown): { id: string; subscription: TopicSubscription }[] {
  // The SDK sends the bare array; an object with `topics` is taken too.
  const topics = isPlainObject(input) && Array.isArray(input['topics']) ? input['topics'] : input;
  if (!Array.isArray(topics)) throw new HeraldError('validation_error', 'The request body must be an array of `{id, subscription}`.');
  return dedupeTopics(parseOrThrow(updateContactTopicsBody, { topics }).topics);
}

/** The last choice for a topic listed twice wins. */
function dedupeTopics(topics: { id: string; subscription: TopicSubscription }[]) {
  return [...new Map(topics.map((t) => [t.id, t])).values()];
}

/** `limit`, `after`, `before` of a REST list (repeated parameters named). */
export function validateListQuery(input: unknown): ListPage {
  const q = isPlainObject(input) ? input : {};
  for (const key of ['limit', 'after', 'before']) {
    const value = q[key];
    if (value !== undefined && typeof value !== 'string') throw new HeraldError('invalid_parameter', `The \`${key}\` parameter must be given once.`);
  }
  return parsePage(q, { blankLimitIsDefault: true });
}

/** The dashboard's contact list: a REST page, plus `q` (part of an address) and `segment_id`. */
export function validateContactSearchQuery(input: unknown): ContactListPage {
  const page: ContactListPage = validateListQuery(input);
  const q = isPlainObject(input) ? input : {};
  const search = q['q'];
  if (search !== undefined && search !== '') {
    if (typeof search !== 'string') throw new HeraldError('invalid_parameter', 'The `q` parameter must be given once.');
    if (search.length > 320) throw new HeraldError('validation_error', 'The `q` parameter must be at most 320 characters.');
    if (search.trim()) page.search = search.trim();
  }
  const segment = q['segment_id'];
  if (segment !== undefined && segment !== '') {
    if (typeof segment !== 'string' || !isUuid(segment))
      throw new HeraldError('invalid_parameter', 'The `segment_id` parameter must be a valid UUID.');
    page.segmentId = segment.toLowerCase();
  }
  return page;
}

/**
 * A path's contact identifier: a UUID or an email address. The SDK sends the address raw
 * (`/contacts/jane+x@acme.com`); one that was percent-encoded is decoded once more.
 */
export function contactIdentifier(segment: string): { id: string } | { email: string } {
  let value = segment.trim();
  if (!isUuid(value) && /%[0-9a-f]{2}/i.test(value)) {
    try {
      value = decodeURIComponent(value).trim();
    } catch {
      // Not an encoding: taken as it is.
    }
  }
  if (isUuid(value)) return { id: value.toLowerCase() };
  const email = normalizeContactEmail(value);
  if (!email) throw new HeraldError('invalid_parameter', 'The contact must be given by its id (a UUID) or its email address.');
  return { email };
}

/** A path's resource id (segment, topic, property, import): a UUID, else 422 `invalid_parameter`. */
export function resourceId(value: string, what: string): string {
  if (!isUuid(value)) throw new HeraldError('invalid_parameter', `The ${what} id must be a valid UUID.`);
  return value.toLowerCase();
}
