import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiParam, ApiQuery } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import {
  addSuppressionBody,
  batchAddSuppressionsBody,
  batchRemoveSuppressionsBody,
  SUPPRESSION_ORIGINS,
  type SuppressionOrigin,
} from '@herald/suppressions';
import { ApiPageQuery } from './openapi.decorators';
import { jsonSchemaOf } from './zod-schema';
import { constant, nullable, REST_TIMESTAMP, UUID } from './schemas';

/*
 * The schemas and decorators of the /suppressions routes. They are inline (not component
 * schemas), so this context documents itself without touching the shared component list.
 */

// A new origin fails to compile here until the document lists it too.
type ListsAll<Missing> = [Missing] extends [never] ? true : false;
type Assert<T extends true> = T;
export type DocumentedOrigins = Assert<ListsAll<Exclude<SuppressionOrigin, (typeof SUPPRESSION_ORIGINS)[number]>>>;

const header = (name: string): ReferenceObject => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': header('RateLimitLimit'),
  'ratelimit-remaining': header('RateLimitRemaining'),
  'ratelimit-reset': header('RateLimitReset'),
};

const ORIGIN: SchemaObject = {
  type: 'string',
  enum: [...SUPPRESSION_ORIGINS],
  description: '`bounce`: a hard bounce. `complaint`: a spam report. `manual`: added through the API.',
};
const EMAIL = jsonSchemaOf(addSuppressionBody).properties?.['email'] as SchemaObject;

const ENTRY_PROPERTIES: Record<string, SchemaObject> = {
  id: UUID,
  email: { ...EMAIL, description: 'The address, lowercased.' },
  origin: ORIGIN,
  source_id: nullable({ ...UUID }, 'The email whose bounce or complaint suppressed the address; null when added by hand.'),
  created_at: REST_TIMESTAMP,
};
const ENTRY_REQUIRED = ['id', 'email', 'origin', 'source_id', 'created_at'];

export const SUPPRESSION_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['object', ...ENTRY_REQUIRED],
  properties: { object: constant('suppression'), ...ENTRY_PROPERTIES },
};
const SUPPRESSION_LIST: SchemaObject = {
  type: 'object',
  required: ['object', 'has_more', 'data'],
  properties: {
    object: constant('list'),
    has_more: { type: 'boolean' },
    data: { type: 'array', items: { type: 'object', required: ENTRY_REQUIRED, properties: ENTRY_PROPERTIES } },
  },
};
const DELETED_SUPPRESSION: SchemaObject = {
  type: 'object',
  required: ['object', 'id', 'deleted'],
  properties: { object: constant('suppression'), id: UUID, deleted: { type: 'boolean', enum: [true] } },
};
const batch = (item: SchemaObject): SchemaObject => ({
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: item } },
});

const ok = (schema: SchemaObject, description: string) => ApiOkResponse({ description, schema, headers: RATE_LIMIT_HEADERS });

export const ApiSuppressionOk = (description: string) => ok(SUPPRESSION_SCHEMA, description);
export const ApiSuppressionListOk = () => ok(SUPPRESSION_LIST, 'The entries, newest first.');
export const ApiDeletedSuppressionOk = () => ok(DELETED_SUPPRESSION, 'Removed.');
export const ApiBatchAddSuppressionsOk = () => ok(batch(SUPPRESSION_SCHEMA), 'The entries, in the order of `emails` (duplicates once).');
export const ApiBatchRemoveSuppressionsOk = () => ok(batch(DELETED_SUPPRESSION), 'The entries removed; addresses or ids not listed are left out.');

// The request bodies are the validators' own zod schemas.
export const ApiAddSuppressionBody = () => ApiBody({ schema: jsonSchemaOf(addSuppressionBody) });
export const ApiBatchAddSuppressionsBody = () => ApiBody({ schema: jsonSchemaOf(batchAddSuppressionsBody) });
export const ApiBatchRemoveSuppressionsBody = () => ApiBody({ schema: jsonSchemaOf(batchRemoveSuppressionsBody) });

export const ApiIdOrEmailParam = () =>
  ApiParam({
    name: 'idOrEmail',
    description: 'The entry\'s id, or its email address (URL-encoded, e.g. `bounced%40example.com`).',
    schema: { type: 'string' },
  });

export const ApiSuppressionPageQuery = () =>
  applyDecorators(
    ApiQuery({ name: 'origin', required: false, description: 'Only entries of this origin.', schema: ORIGIN }),
    ApiPageQuery('entry'),
  );
