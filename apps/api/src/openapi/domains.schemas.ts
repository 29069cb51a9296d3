import type { SchemaObject } from '@nestjs/swagger';
import { createDomainBody, type DomainStatus, type RecordPurpose, type RecordStatus, updateDomainBody } from '@herald/domains';
import { constant, list, nullable, reference, REST_TIMESTAMP, schemaRef, UUID } from './schemas';
import { jsonSchemaOf } from './zod-schema';

/*
 * The component schemas and decorators of the /domains routes. The regions are the
 * deployment's (HERALD_REGIONS), so a self-hosted document lists the ones it runs.
 */

export type DomainSchemaName =
  | 'CreateDomainRequest'
  | 'CreateDomainResponse'
  | 'UpdateDomainRequest'
  | 'Domain'
  | 'DomainListItem'
  | 'DomainList'
  | 'DomainRecord'
  | 'DomainReference'
  | 'DeletedDomain';

const DOMAIN_STATUSES = [
  'not_started', 'pending', 'verified', 'partially_verified', 'partially_failed', 'failed', 'temporary_failure',
] as const satisfies readonly DomainStatus[];
const RECORD_STATUSES = ['not_started', 'pending', 'verified', 'failed', 'temporary_failure'] as const satisfies readonly RecordStatus[];
const RECORD_PURPOSES = ['DKIM', 'SPF', 'DMARC', 'Tracking'] as const satisfies readonly RecordPurpose[];

// A new status or record purpose fails to compile here until the document lists it too.
type ListsAll<Missing> = [Missing] extends [never] ? true : false;
type Assert<T extends true> = T;
type DocumentedEnums = Assert<ListsAll<Exclude<DomainStatus, (typeof DOMAIN_STATUSES)[number]>>> &
  Assert<ListsAll<Exclude<RecordStatus, (typeof RECORD_STATUSES)[number]>>> &
  Assert<ListsAll<Exclude<RecordPurpose, (typeof RECORD_PURPOSES)[number]>>>;

const LABEL: SchemaObject = { type: 'string', pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$', maxLength: 63 };
const TLS: SchemaObject = {
  type: 'string',
  enum: ['opportunistic', 'enforced'],
  description: '`opportunistic`: TLS when the receiving server offers it. `enforced`: never deliver without TLS.',
};
const CAPABILITIES: SchemaObject = {
  type: 'object',
  description: 'Herald domains send; receiving is not supported.',
  properties: { sending: { type: 'string', enum: ['enabled'] }, receiving: { type: 'string', enum: ['disabled'] } },
  example: { sending: 'enabled', receiving: 'disabled' },
};
const TRACKING_SUBDOMAIN = (description: string): SchemaObject => ({ ...LABEL, description, example: 'links' });

function domainSummary(regions: readonly string[]): SchemaObject {
  return {
    type: 'object',
    required: ['id', 'name', 'status', 'created_at', 'region', 'capabilities', 'open_tracking', 'click_tracking', 'tracking_subdomain'],
    properties: {
      id: UUID,
      name: { type: 'string', description: 'Lowercase; internationalized names in punycode.', example: 'example.com' },
      status: {
        type: 'string',
        enum: [...DOMAIN_STATUSES],
        description: 'Sending is allowed once the domain is `verified` (DKIM and SPF records seen).',
        example: 'not_started',
      },
      created_at: REST_TIMESTAMP,
      region: { type: 'string', enum: [...regions], description: 'Where its mail is sent from; fixed at creation.', example: regions[0] },
      capabilities: { ...CAPABILITIES, required: ['sending', 'receiving'] },
      open_tracking: { type: 'boolean' },
      click_tracking: { type: 'boolean' },
      tracking_subdomain: nullable(TRACKING_SUBDOMAIN('The tracking subdomain, if one was set.')),
    },
  };
}

function createdDomain(regions: readonly string[]): SchemaObject {
  const summary = domainSummary(regions);
  return {
    type: 'object',
    required: [...(summary.required ?? []), 'custom_return_path', 'tls', 'records'],
    properties: {
      ...summary.properties,
      custom_return_path: { ...LABEL, description: 'The return-path subdomain (SPF and bounces).', example: 'send' },
      tls: TLS,
      records: {
        type: 'array',
        items: schemaRef('DomainRecord'),
        description: 'The DNS records to publish, with what the last check found.',
      },
    },
  };
}

export function domainComponentSchemas(regions: readonly string[]): Record<DomainSchemaName, SchemaObject> {
  const created = createdDomain(regions);
  return {
    CreateDomainRequest: jsonSchemaOf(createDomainBody(regions)),
    CreateDomainResponse: created,
    Domain: {
      type: 'object',
      required: ['object', ...(created.required ?? [])],
      properties: { object: constant('domain'), ...created.properties },
    },
    DomainListItem: domainSummary(regions),
    DomainList: {
      ...list('DomainListItem'),
      description: 'Without `limit`, every domain and `has_more: false`.',
    },
    DomainRecord: {
      type: 'object',
      required: ['record', 'name', 'type', 'ttl', 'status', 'value'],
      properties: {
        record: {
          type: 'string',
          enum: [...RECORD_PURPOSES],
          description: 'DKIM and SPF are required to send; DMARC (a Herald addition) and Tracking are recommended.',
        },
        name: { type: 'string', description: 'Relative to the domain.', example: 'h20261125rk4qz._domainkey' },
        type: { type: 'string', enum: ['TXT', 'MX', 'CNAME'] },
        ttl: { type: 'string', example: 'Auto' },
        status: { type: 'string', enum: [...RECORD_STATUSES] },
        value: { type: 'string', example: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA...' },
        priority: { type: 'integer', description: 'MX records only.', example: 10 },
      },
    },
    UpdateDomainRequest: jsonSchemaOf(updateDomainBody),
    DomainReference: reference('domain'),
    DeletedDomain: {
      type: 'object',
      required: ['object', 'id', 'deleted'],
      properties: { object: constant('domain'), id: UUID, deleted: { type: 'boolean', enum: [true] } },
    },
  };
}

