import { isoTimestamp, restTimestamp } from '@herald/core';
import type { Domain, DomainRecord } from './domain.types';

/*
 * Resend's wire shapes for domains. Records lose Herald's internal fields (`required`,
 * `dkimKeyId`, and what DNS answered, `observed` and `problem`, which are for operators:
 * `herald domain verify`).
 */

/** Herald domains send; receiving is not built. */
const CAPABILITIES = { sending: 'enabled', receiving: 'disabled' } as const;

export function presentRecord(record: DomainRecord) {
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
export function presentDomainSummary(domain: Domain) {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    created_at: restTimestamp(domain.createdAt) as string,
    region: domain.region,
    capabilities: CAPABILITIES,
    open_tracking: domain.openTracking,
    click_tracking: domain.clickTracking,
    tracking_subdomain: domain.trackingSubdomain,
  };
}

/** POST /domains answers the domain without an `object` key, as Resend does. */
export function presentCreatedDomain(domain: Domain) {
  return {
    ...presentDomainSummary(domain),
    custom_return_path: domain.customReturnPath,
    tls: domain.tls,
    records: domain.records.map(presentRecord),
  };
}

/** GET /domains/:id. */
export function presentDomain(domain: Domain) {
  return { object: 'domain' as const, ...presentCreatedDomain(domain) };
}

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
  };
}
