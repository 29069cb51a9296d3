import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { isAbsent, isPlainObject, jsonBody, mustBe, optional, parseOrThrow, required, typeError } from '@herald/http';
import { PROPERTY_TYPES, type PropertyType, type PropertyValue, TOPIC_SUBSCRIPTIONS, TOPIC_VISIBILITIES } from './contact.types';
import type { NewTopic, TopicPatch } from './topics.repository';

/* The bodies of /segments, /topics and /contact-properties, checked one problem at a time, naming the field. */

export const MAX_SEGMENT_NAME = 256;
export const MAX_TOPIC_NAME = 50;
export const MAX_TOPIC_DESCRIPTION = 200;
export const MAX_PROPERTY_KEY = 50;
const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Keys a merge tag reads from the contact itself (`{{{contact.email}}}`), not from its properties. */
const RESERVED_KEYS = new Set(['id', 'email', 'first_name', 'last_name', 'unsubscribed', 'created_at']);

const text = (field: string, max: number) =>
  z
    .string({ error: typeError('a string') })
    .transform((value) => value.trim())
    .refine((value) => value.length > 0, { error: mustBe(field, 'a non-empty string') })
    .refine((value) => value.length <= max, { error: mustBe(field, `at most ${max} characters`) });

export const segmentBody = jsonBody(z.object({ name: required(text('name', MAX_SEGMENT_NAME), 'The `name` field is required.') })).meta({
  example: { name: 'Registered users' },
});

export const validateSegmentName = (input: unknown): string => parseOrThrow(segmentBody, input).name;

const description = z.preprocess(
  (value) => (value === null ? '' : value),
  z
    .string({ error: typeError('a string') })
    .max(MAX_TOPIC_DESCRIPTION, { error: mustBe('description', `at most ${MAX_TOPIC_DESCRIPTION} characters`) })
    .transform((value) => value.trim() || null)
    .optional(),
);
const visibility = optional(z.enum(TOPIC_VISIBILITIES, { error: mustBe('visibility', '`public` or `private`') }));

export const createTopicBody = jsonBody(
  z.object({
    name: required(text('name', MAX_TOPIC_NAME), 'The `name` field is required.'),
    description,
    default_subscription: required(
      z.enum(TOPIC_SUBSCRIPTIONS, { error: mustBe('default_subscription', '`opt_in` or `opt_out`') }),
      'The `default_subscription` field is required.',
    ),
    visibility,
  }),
).meta({ example: { name: 'Product news', description: 'New features, once a month', default_subscription: 'opt_in', visibility: 'public' } });

export const updateTopicBody = jsonBody(
  z.object({
    name: optional(text('name', MAX_TOPIC_NAME)),
    description,
    visibility,
    default_subscription: z.unknown().optional(),
  }),
).meta({ example: { name: 'Product updates', description: 'New features and fixes, once a month' } });

export function validateCreateTopic(input: unknown): Omit<NewTopic, 'id'> {
  const body = parseOrThrow(createTopicBody, input);
  return {
    name: body.name,
    description: body.description ?? null,
    defaultSubscription: body.default_subscription,
    visibility: body.visibility ?? 'private',
  };
}

/** PATCH /topics/:id. The SDK repeats `id` in the body; `default_subscription` cannot change once set. */
export function validateUpdateTopic(input: unknown, current: { defaultSubscription: string }): TopicPatch {
  const body = parseOrThrow(updateTopicBody, isAbsent(input) ? {} : input);
  if (!isAbsent(body.default_subscription) && body.default_subscription !== current.defaultSubscription) {
    throw new HeraldError('validation_error', 'The `default_subscription` field cannot be changed once the topic exists.');
  }
  const patch: TopicPatch = {};
  if (body.name !== undefined) patch.name = body.name;
  if (isPlainObject(input) && 'description' in input) patch.description = body.description ?? null;
  if (body.visibility !== undefined) patch.visibility = body.visibility;
  return patch;
}

const key = z
  .string({ error: typeError('a string') })
  .refine((value) => KEY.test(value) && value.length <= MAX_PROPERTY_KEY, {
    error: mustBe('key', `letters, digits and underscores, starting with a letter or an underscore, at most ${MAX_PROPERTY_KEY} characters`),
  })
  .refine((value) => !RESERVED_KEYS.has(value), {
    error: 'The `key` field cannot be one of the contact fields (id, email, first_name, last_name, unsubscribed, created_at).',
  });

const propertyType = z.enum(PROPERTY_TYPES, { error: mustBe('type', '`string` or `number`') });

export const createPropertyBody = jsonBody(
  z.object({
    key: required(key, 'The `key` field is required.'),
    type: required(propertyType, 'The `type` field is required.'),
    fallback_value: z.unknown().optional(),
  }),
).meta({ example: { key: 'company_name', type: 'string', fallback_value: 'your company' } });

/** PATCH /contact-properties/:id, as documented (validateUpdateProperty checks it against the property). */
export const updatePropertyBody = z
  .object({ fallback_value: z.union([z.string(), z.number()]).nullable().optional() })
  .meta({ example: { fallback_value: 'your team' } });

/** A fallback for a property of `type`: a value of that type, or null/absent for none. */
export function checkFallback(value: unknown, type: PropertyType): PropertyValue | null {
  if (isAbsent(value)) return null;
  if (type === 'string' && typeof value === 'string') {
    if (value.length > 2000) throw new HeraldError('validation_error', mustBe('fallback_value', 'at most 2000 characters'));
    return value;
  }
  if (type === 'number' && typeof value === 'number' && Number.isFinite(value)) return value;
  throw new HeraldError('validation_error', mustBe('fallback_value', `a ${type} (the property's type) or null`));
}

export function validateCreateProperty(input: unknown): { key: string; type: PropertyType; fallback: PropertyValue | null } {
  const body = parseOrThrow(createPropertyBody, input);
  return { key: body.key, type: body.type, fallback: checkFallback(body.fallback_value, body.type) };
}

/** PATCH /contact-properties/:id: only `fallback_value` changes (the SDK sends `key`/`type` too, which must not differ). */
export function validateUpdateProperty(input: unknown, current: { key: string; type: PropertyType }): PropertyValue | null | undefined {
  const body = isAbsent(input) ? {} : input;
  if (!isPlainObject(body)) throw new HeraldError('validation_error', 'The request body must be a JSON object.');
  if (!isAbsent(body['key']) && body['key'] !== current.key) throw new HeraldError('validation_error', 'The `key` field cannot be changed.');
  if (!isAbsent(body['type']) && body['type'] !== current.type) throw new HeraldError('validation_error', 'The `type` field cannot be changed.');
  if (!('fallback_value' in body)) return undefined;
  return checkFallback(body['fallback_value'], current.type);
}
