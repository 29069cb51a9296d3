import { Injectable } from '@nestjs/common';
import { DomainRecord, RecordStatus } from '../domain.types';
import { DnsOutcome, DnsResolver } from './dns-resolver';
import { isDmarcRecord, parseDmarc } from './dmarc';
import { isSpfRecord, parseDkimKeyRecord, requiredSpfTerms, sameHost, unauthorizedSpfTerms } from './record-syntax';

/** What a check of one record found, with what DNS answered there. */
export interface RecordCheck {
  status: RecordStatus;
  observed: string[];
  problem?: string;
}

/**
 * How a record that DNS does not have is reported: `pending` while the customer may still be
 * publishing it (inside the verification window, never verified), `failed` otherwise.
 */
export type AbsentStatus = 'pending' | 'failed';

/**
 * verified; absent (NXDOMAIN, NODATA, nothing of the record's kind at the name); contradicting
 * (something of its kind that is wrong: another key, a second SPF record, another MX target);
 * temporary (no usable answer: timeout, SERVFAIL).
 */
type Finding =
  | { kind: 'verified'; observed: string[] }
  | { kind: 'absent' | 'contradicting'; observed: string[]; problem: string }
  | { kind: 'temporary'; problem: string };

/** The absolute name of a record shown relative to its domain (`send` → `send.example.com`). */
export function recordHost(record: Pick<DomainRecord, 'name'>, domain: string): string {
  const name = record.name.trim().replace(/\.$/, '');
  if (name === '' || name === '@' || sameHost(name, domain)) return domain;
  return name.toLowerCase().endsWith(`.${domain.toLowerCase()}`) ? name : `${name}.${domain}`;
}

/** Checks one expected record against DNS. */
@Injectable()
export class RecordChecker {
  constructor(private readonly dns: DnsResolver) {}

  async check(record: DomainRecord, domain: string, absent: AbsentStatus): Promise<RecordCheck> {
    const finding = await this.find(record, recordHost(record, domain));
    switch (finding.kind) {
      case 'verified':
        return { status: 'verified', observed: finding.observed };
      case 'absent':
        return { status: absent, observed: finding.observed, problem: finding.problem };
      case 'contradicting':
        return { status: 'failed', observed: finding.observed, problem: finding.problem };
      case 'temporary':
        return { status: 'temporary_failure', observed: [], problem: finding.problem };
    }
  }

  private find(record: DomainRecord, host: string): Promise<Finding> {
    switch (record.type) {
      case 'MX':
        return this.mx(host, record.value);
      case 'CNAME':
        return this.cname(host, record.value);
      case 'TXT':
        if (record.record === 'DKIM') return this.dkim(host, record.value);
        if (record.record === 'SPF') return this.spf(host, record.value);
        if (record.record === 'DMARC') return this.dmarc(host);
        return this.text(host, record.value);
    }
  }

  /** A DKIM key record at the selector whose `p=` is the expected key (RFC 6376 §3.6.1). */
  private async dkim(host: string, expectedValue: string): Promise<Finding> {
    const answer = await this.dns.resolveTxt(host);
    if (answer.kind !== 'answer') return noAnswer(answer, host, 'TXT');
    const observed = answer.values;
    const expected = parseDkimKeyRecord(expectedValue);
    const published = observed.map(parseDkimKeyRecord).filter((k) => k !== null);
    if (!published.length) return { kind: 'absent', observed, problem: `no DKIM key record (p=...) at ${host}` };
    // §3.6.2.2: a selector's TXT RRset must hold one key record; with more, verifiers pick any.
    if (published.length > 1) return { kind: 'contradicting', observed, problem: `more than one DKIM key record at ${host}` };
    const [key] = published;
    if (!key.publicKey) return { kind: 'contradicting', observed, problem: 'DKIM key is revoked (empty p=)' };
    if (!expected || key.publicKey !== expected.publicKey) return { kind: 'contradicting', observed, problem: 'DKIM key does not match' };
    if (key.keyType !== expected.keyType) {
      return { kind: 'contradicting', observed, problem: `DKIM key type does not match: k=${key.keyType}, expected k=${expected.keyType}` };
    }
    return { kind: 'verified', observed };
  }

  /**
   * One `v=spf1` record at the return-path host that passes every mechanism of the expected one
   * (the customer may add their own mechanisms). Two SPF records are a permerror (RFC 7208 §4.5).
   */
  private async spf(host: string, expectedValue: string): Promise<Finding> {
    const answer = await this.dns.resolveTxt(host);
    if (answer.kind !== 'answer') return noAnswer(answer, host, 'TXT');
    const observed = answer.values;
    const records = observed.filter(isSpfRecord);
    if (!records.length) return { kind: 'absent', observed, problem: `no v=spf1 record at ${host}` };
    if (records.length > 1) {
      return { kind: 'contradicting', observed, problem: `more than one v=spf1 record at ${host} (RFC 7208 §4.5: permerror)` };
    }
    const missing = unauthorizedSpfTerms(records[0], requiredSpfTerms(expectedValue));
    if (missing.length) {
      return {
        kind: 'contradicting',
        observed,
        problem: `SPF record does not authorize Herald: needs ${missing.map((t) => t.text).join(' ')} before any "all"`,
      };
    }
    return { kind: 'verified', observed };
  }

  /**
   * An MX at the return-path host to the region's bounce host, preferred over any other MX
   * there: bounces go to the most preferred exchange, and Herald must receive them.
   */
  private async mx(host: string, expectedHost: string): Promise<Finding> {
    const answer = await this.dns.resolveMx(host);
    if (answer.kind !== 'answer') return noAnswer(answer, host, 'MX');
    const observed = answer.values.map((mx) => `${mx.priority} ${mx.exchange}`);
    const ours = answer.values.filter((mx) => sameHost(mx.exchange, expectedHost));
    if (!ours.length) return { kind: 'contradicting', observed, problem: `MX at ${host} does not point to ${expectedHost}` };
    const best = Math.min(...answer.values.map((mx) => mx.priority));
    if (Math.min(...ours.map((mx) => mx.priority)) > best) {
      const other = answer.values.find((mx) => mx.priority === best)!;
      return {
        kind: 'contradicting',
        observed,
        problem: `${other.exchange} (priority ${best}) is preferred over ${expectedHost}: bounces would go there`,
      };
    }
    return { kind: 'verified', observed };
  }

  private async cname(host: string, expectedTarget: string): Promise<Finding> {
    const answer = await this.dns.resolveCname(host);
    if (answer.kind !== 'answer') return noAnswer(answer, host, 'CNAME');
    const observed = answer.values;
    if (!observed.some((target) => sameHost(target, expectedTarget))) {
      return { kind: 'contradicting', observed, problem: `CNAME at ${host} points to ${observed.join(', ')}, not ${expectedTarget}` };
    }
    return { kind: 'verified', observed };
  }

  /** Any single DMARC record with a valid policy: Herald recommends one, whatever its policy. */
  private async dmarc(host: string): Promise<Finding> {
    const answer = await this.dns.resolveTxt(host);
    if (answer.kind !== 'answer') return noAnswer(answer, host, 'TXT');
    const observed = answer.values;
    const records = observed.filter(isDmarcRecord);
    if (!records.length) return { kind: 'absent', observed, problem: `no v=DMARC1 record at ${host}` };
    if (records.length > 1) {
      return { kind: 'contradicting', observed, problem: `more than one DMARC record at ${host} (RFC 7489 §6.6.3: none applies)` };
    }
    if (!parseDmarc(records[0])?.policy)
      return { kind: 'contradicting', observed, problem: 'DMARC record has no valid p= (none, quarantine or reject)' };
    return { kind: 'verified', observed };
  }

  /** Any other TXT record: present with the expected text, whitespace aside. */
  private async text(host: string, expectedValue: string): Promise<Finding> {
    const answer = await this.dns.resolveTxt(host);
    if (answer.kind !== 'answer') return noAnswer(answer, host, 'TXT');
    const squash = (s: string) => s.replace(/\s+/g, '');
    if (answer.values.some((v) => squash(v) === squash(expectedValue))) return { kind: 'verified', observed: answer.values };
    return { kind: 'absent', observed: answer.values, problem: `no TXT record at ${host} with the expected value` };
  }
}

function noAnswer(outcome: Exclude<DnsOutcome<unknown>, { kind: 'answer' }>, host: string, type: string): Finding {
  switch (outcome.kind) {
    case 'nxdomain':
      return { kind: 'absent', observed: [], problem: `${host} does not exist (NXDOMAIN)` };
    case 'nodata':
      return { kind: 'absent', observed: [], problem: `no ${type} record at ${host}` };
    case 'timeout':
    case 'error':
      return { kind: 'temporary', problem: `DNS lookup failed: ${outcome.message}` };
  }
}
