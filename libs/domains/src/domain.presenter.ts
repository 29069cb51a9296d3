import { z } from 'zod';
import { isoTimestamp, restTimestamp } from '@herald/core';
import { wireDeleted, wireId, wireList, wireReference, wireTimestamp } from '@herald/http';
import { pauseMessage } from './domain-pause';
import type { Domain, DomainRecord, DomainStatus, RecordPurpose, RecordStatus } from './domain.types';

/*
 * Resend's wire shapes for domains, each the zod schema its presenter answers (/openapi.json is
 * generated from them). Records lose Herald's internal fields (`required`, `dkimKeyId`, and what
 * DNS answered, `observed` and `problem`, which are for operators: `herald domain verify`).
 * The presenters assign the domain's own types to these enums: a new status or purpose fails to
 * compile until it is listed here.
 */

const DOMAIN_STATUSES = [
  'not_started',
  'pending',
  'verified',
  'partially_verified',
  'partially_failed',
  'failed',
  'temporary_failure',
] as const satisfies readonly DomainStatus[];
const RECORD_STATUSES = ['not_started', 'pending', 'verified', 'failed', 'temporary_failure'] as const satisfies readonly RecordStatus[];
const RECORD_PURPOSES = ['DKIM', 'SPF', 'DMARC', 'Tracking'] as const satisfies readonly RecordPurpose[];

/** Herald domains send; receiving is not built. */
const CAPABILITIES = { sending: 'enabled', receiving: 'disabled' } as const;

const label = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);

export const domainRecordSchema = z.object({
  record: z.enum(RECORD_PURPOSES).meta({
    description: 'DKIM and SPF are required to send; DMARC (a Herald addition) and Tracking are recommended.',
  }),
  name: z.string().meta({ description: 'Relative to the domain.', example: 'h20261125rk4qz._domainkey' }),
  type: z.enum(['TXT', 'MX', 'CNAME']),
  ttl: z.literal('Auto'),
  status: z.enum(RECORD_STATUSES),
  value: z.string().meta({ example: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA...' }),
  priority: z.int().optional().meta({ description: 'MX records only.', example: 10 }),
});

/** Herald's reputation guardrail: why new sends from the domain are refused until it is resumed. */
export const domainPausedSchema = z
  .object({
    reason: z.enum(['bounce_rate', 'complaint_rate']),
    rate: z.number().meta({ description: 'The measured rate (0.063 is 6.3%).', example: 0.063 }),
    threshold: z.number().meta({ description: 'The limit it passed: 0.04 for bounces, 0.003 for complaints.', example: 0.04 }),
    sent: z.int().meta({ description: 'Recipients sent to in the window.', example: 412 }),
    window_hours: z.int().meta({ example: 24 }),
    paused_at: wireTimestamp,
    message: z.string().meta({ description: 'The reason in words, as a refused send says it.' }),
  })
  .nullable()
  .meta({
    description:
      'Herald extension. Set while the reputation guardrail holds new sends from the domain (refused with 403 `domain_paused`); ' +
      '`POST /domains/{id}/resume` lifts it. Null otherwise.',
  });

export const domainSummarySchema = z.object({
  id: wireId,
  name: z.string().meta({ description: 'Lowercase; internationalized names in punycode.', example: 'example.com' }),
  status: z.enum(DOMAIN_STATUSES).meta({
    description: 'Sending is allowed once the domain is `verified` (DKIM and SPF records seen).',
    example: 'not_started',
  }),
  created_at: wireTimestamp,
  region: z.string().meta({ description: 'Where its mail is sent from (one of HERALD_REGIONS); fixed at creation.', example: 'us-east-1' }),
  capabilities: z
    .object({ sending: z.literal(CAPABILITIES.sending), receiving: z.literal(CAPABILITIES.receiving) })
    .meta({ description: 'Herald domains send; receiving is not supported.' }),
  open_tracking: z.boolean(),
  click_tracking: z.boolean(),
  tracking_subdomain: label.nullable().meta({ description: 'The tracking subdomain, if one was set.', example: 'links' }),
  paused: domainPausedSchema,
});

/** POST /domains answers the domain without an `object` key, as Resend does. */
export const createdDomainSchema = z.object({
  ...domainSummarySchema.shape,
  custom_return_path: label.meta({ description: 'The return-path subdomain (SPF and bounces).', example: 'send' }),
  tls: z.enum(['opportunistic', 'enforced']).meta({
    description: '`opportunistic`: TLS when the receiving server offers it. `enforced`: never deliver without TLS.',
  }),
  records: z.array(domainRecordSchema).meta({ description: 'The DNS records to publish, with what the last check found.' }),
});

export const domainSchema = z.object({ object: z.literal('domain'), ...createdDomainSchema.shape });
export const domainListSchema = wireList(domainSummarySchema).meta({ description: 'Without `limit`, every domain and `has_more: false`.' });
export const domainReferenceSchema = wireReference('domain');
export const deletedDomainSchema = wireDeleted('domain');

export type DomainRecordBody = z.infer<typeof domainRecordSchema>;
export type DomainSummaryBody = z.infer<typeof domainSummarySchema>;
export type CreatedDomainBody = z.infer<typeof createdDomainSchema>;
export type DomainBody = z.infer<typeof domainSchema>;
export type DomainList = z.infer<typeof domainListSchema>;
export type DomainReference = z.infer<typeof domainReferenceSchema>;
export type DeletedDomain = z.infer<typeof deletedDomainSchema>;

export function presentRecord(record: DomainRecord): DomainRecordBody {
  return {
    record: record.record,
    name: record.name,
    type: record.type,
    ttl: record.ttl,
    status: record.status,
    value: record.value,
    ...(record.priority !== undefined && { priority: record.priority }),
  };
}

/** One item of GET /domains: no records. */
export function presentDomainSummary(domain: Domain): DomainSummaryBody {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    created_at: restTimestamp(domain.createdAt),
    region: domain.region,
    capabilities: CAPABILITIES,
    open_tracking: domain.openTracking,
    click_tracking: domain.clickTracking,
    tracking_subdomain: domain.trackingSubdomain,
    paused: presentPause(domain),
  };
}

function presentPause(domain: Domain): DomainSummaryBody['paused'] {
  const { pause, pausedAt } = domain;
  if (!pause || !pausedAt) return null;
  return {
    reason: pause.reason,
    rate: pause.rate,
    threshold: pause.threshold,
    sent: pause.sent,
    window_hours: pause.windowHours,
    paused_at: restTimestamp(pausedAt),
    message: pauseMessage(domain, pause),
  };
}

export function presentCreatedDomain(domain: Domain): CreatedDomainBody {
  return {
    ...presentDomainSummary(domain),
    custom_return_path: domain.customReturnPath,
    tls: domain.tls,
    records: domain.records.map(presentRecord),
  };
}

/** GET /domains/:id. */
export function presentDomain(domain: Domain): DomainBody {
  return { object: 'domain', ...presentCreatedDomain(domain) };
}

export const presentDomainList = (page: { items: Domain[]; hasMore: boolean }): DomainList => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map(presentDomainSummary),
});

export const presentDomainReference = (id: string): DomainReference => ({ object: 'domain', id });
export const presentDeletedDomain = (id: string): DeletedDomain => ({ object: 'domain', id, deleted: true });

/** The `data` of domain.created / domain.updated / domain.deleted events (ISO timestamps, as webhooks use). */
export function domainEventData(domain: Domain) {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    created_at: isoTimestamp(domain.createdAt),
    region: domain.region,
    capabilities: CAPABILITIES,
    records: domain.records.map(presentRecord),
    paused: presentPause(domain),
  };
}
