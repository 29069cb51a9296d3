import type { HeraldConfig } from '@herald/config';
import { dkimRecordValue } from './dkim-key.crypto';
import type { DkimKey, Domain, DomainRecord } from './domain.types';

/** The config the records are made of: every host and address a customer publishes comes from here. */
export type MailHostsConfig = Pick<HeraldConfig, 'MAIL_DOMAIN' | 'REGION_BOUNCE_HOSTS' | 'REGION_SPF'>;

export type RecordsDomain = Pick<Domain, 'region' | 'customReturnPath' | 'trackingSubdomain'>;
export type RecordsKey = Pick<DkimKey, 'id' | 'selector' | 'algorithm' | 'publicKey' | 'state'>;

/** The region's bounce MX: REGION_BOUNCE_HOSTS, else `bounce.<region>.<MAIL_DOMAIN>`. */
export const regionBounceHost = (config: MailHostsConfig, region: string): string =>
  config.REGION_BOUNCE_HOSTS[region] ?? `bounce.${region}.${config.MAIL_DOMAIN}`;

/** The SPF mechanisms of the region's sending addresses: REGION_SPF, else `include:_spf.<region>.<MAIL_DOMAIN>`. */
export const regionSpfMechanisms = (config: MailHostsConfig, region: string): string =>
  config.REGION_SPF[region] ?? `include:_spf.${region}.${config.MAIL_DOMAIN}`;

/** Where tracking CNAMEs point: `track.<MAIL_DOMAIN>`. */
export const trackingHost = (config: MailHostsConfig): string => `track.${config.MAIL_DOMAIN}`;

export const DMARC_RECORD_VALUE = 'v=DMARC1; p=none;';

/**
 * The DNS records a domain must publish, in the order they are shown: one DKIM TXT per key that
 * is not retired (a pending key is published so that it can verify before it signs; a retiring
 * one stays until mail signed with it has been checked), the return-path MX and SPF TXT, DMARC,
 * and the tracking CNAME when a tracking subdomain is set. Names are relative to the domain.
 * Only the DKIM records of active keys, and SPF, are required for the domain to verify: a key
 * being rotated in or out must not fail a domain that signs with another.
 */
export function buildDnsRecords(config: MailHostsConfig, domain: RecordsDomain, keys: readonly RecordsKey[]): DomainRecord[] {
  // RSA records first, then Ed25519, each in key order (the sort is stable).
  const byAlgorithm = keys.filter((key) => key.state !== 'retired').sort((a, b) => rank(a) - rank(b));
  const records: DomainRecord[] = byAlgorithm.map((key) => ({
    record: 'DKIM',
    name: `${key.selector}._domainkey`,
    type: 'TXT',
    value: dkimRecordValue(key.algorithm, key.publicKey),
    ttl: 'Auto',
    status: 'not_started',
    required: key.state === 'active',
    dkimKeyId: key.id,
  }));
  records.push(
    {
      record: 'SPF',
      name: domain.customReturnPath,
      type: 'MX',
      value: regionBounceHost(config, domain.region),
      ttl: 'Auto',
      priority: 10,
      status: 'not_started',
      required: true,
    },
    {
      record: 'SPF',
      name: domain.customReturnPath,
      type: 'TXT',
      value: `v=spf1 ${regionSpfMechanisms(config, domain.region)} ~all`,
      ttl: 'Auto',
      status: 'not_started',
      required: true,
    },
    { record: 'DMARC', name: '_dmarc', type: 'TXT', value: DMARC_RECORD_VALUE, ttl: 'Auto', status: 'not_started', required: false },
  );
  if (domain.trackingSubdomain) {
    records.push({
      record: 'Tracking',
      name: domain.trackingSubdomain,
      type: 'CNAME',
      value: trackingHost(config),
      ttl: 'Auto',
      status: 'not_started',
      required: false,
    });
  }
  return records;
}

const rank = (key: RecordsKey): number => (key.algorithm === 'rsa-sha256' ? 0 : 1);

/**
 * Rebuilt records keep what verification last found for a record that did not change (same
 * purpose, name, type and value); a new or changed record starts at `not_started`.
 */
export function carryVerification(previous: readonly DomainRecord[], fresh: readonly DomainRecord[]): DomainRecord[] {
  const key = (r: DomainRecord) => `${r.record}\u0000${r.name}\u0000${r.type}\u0000${r.value}`;
  const seen = new Map(previous.map((r) => [key(r), r]));
  return fresh.map((record) => {
    const old = seen.get(key(record));
    if (!old) return record;
    const { status, observed, problem } = old;
    return { ...record, status, ...(observed !== undefined && { observed }), ...(problem !== undefined && { problem }) };
  });
}
