import { Injectable } from '@nestjs/common';
import { DmarcReport } from '../domain.types';
import { DnsResolver } from './dns-resolver';
import { parseTagList, sameHost } from './record-syntax';

export type DmarcPolicy = NonNullable<DmarcReport['policy']>;
type Alignment = 'r' | 's';

/** The parts of a DMARC record (RFC 7489 §6.3) that Herald reports. */
export interface DmarcRecord {
  text: string;
  /** `p=`; null when missing or not one of none/quarantine/reject. */
  policy: DmarcPolicy | null;
  /** `sp=`: the policy for subdomains of the domain holding the record. */
  subdomainPolicy: DmarcPolicy | null;
  adkim: Alignment;
  aspf: Alignment;
}

const POLICIES: readonly string[] = ['none', 'quarantine', 'reject'];

export const isDmarcRecord = (text: string): boolean => /^v\s*=\s*DMARC1\s*(;|$)/i.test(text.trim());

export function parseDmarc(text: string): DmarcRecord | null {
  if (!isDmarcRecord(text)) return null;
  const tags = parseTagList(text);
  const policy = (name: string) => {
    const value = tags.get(name)?.toLowerCase();
    return value !== undefined && POLICIES.includes(value) ? (value as DmarcPolicy) : null;
  };
  const alignment = (name: string): Alignment => (tags.get(name)?.toLowerCase() === 's' ? 's' : 'r');
  return { text: text.trim(), policy: policy('p'), subdomainPolicy: policy('sp'), adkim: alignment('adkim'), aspf: alignment('aspf') };
}

/**
 * Second-level labels under which registrations happen, for the organizational domain. Herald
 * does not ship the Public Suffix List (RFC 7489 §3.2 uses it); this short list covers the
 * common multi-label suffixes, and any other name's organizational domain is its last two labels.
 */
const MULTI_LABEL_SUFFIXES = new Set([
  'co.uk',
  'org.uk',
  'ac.uk',
  'gov.uk',
  'me.uk',
  'ltd.uk',
  'plc.uk',
  'com.au',
  'net.au',
  'org.au',
  'edu.au',
  'gov.au',
  'co.nz',
  'org.nz',
  'net.nz',
  'co.jp',
  'ne.jp',
  'or.jp',
  'ac.jp',
  'go.jp',
  'com.br',
  'net.br',
  'org.br',
  'com.cn',
  'net.cn',
  'org.cn',
  'co.in',
  'net.in',
  'org.in',
  'co.za',
  'org.za',
  'com.mx',
  'com.ar',
  'com.tr',
  'com.sg',
  'com.hk',
  'com.tw',
  'co.kr',
  'co.il',
]);

/** The organizational domain of a name (simplified; see MULTI_LABEL_SUFFIXES). */
export function organizationalDomain(name: string): string {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.');
  const suffixLabels = labels.length >= 3 && MULTI_LABEL_SUFFIXES.has(labels.slice(-2).join('.')) ? 3 : 2;
  return labels.slice(-suffixLabels).join('.');
}

/** The DMARC report of a domain, or why it could not be made now (a DNS failure). */
export type DmarcInspection = { kind: 'report'; report: DmarcReport } | { kind: 'temporary'; message: string };

/** The records a DMARC lookup found at one name: exactly one DMARC record applies (§6.6.3). */
type Lookup = { kind: 'found'; record: DmarcRecord } | { kind: 'none' } | { kind: 'temporary'; message: string };

@Injectable()
export class DmarcInspector {
  constructor(private readonly dns: DnsResolver) {}

  /**
   * RFC 7489 §6.6.3: the record at `_dmarc.<domain>`, else at `_dmarc.<organizational domain>`.
   * Alignment is for the mail Herald sends from the domain: DKIM `d=` is the domain itself, so
   * it aligns in relaxed and strict mode; the Return-Path (`<returnPathHost>`) is a subdomain,
   * so SPF aligns in relaxed mode (same organizational domain) and never in strict mode.
   */
  async inspect(domain: string, returnPathHost: string, now: Date = new Date()): Promise<DmarcInspection> {
    const own = await this.lookup(domain);
    if (own.kind === 'temporary') return own;
    const organizational = organizationalDomain(domain);
    const inherited = own.kind === 'none' && organizational !== domain.toLowerCase() ? await this.lookup(organizational) : null;
    if (inherited?.kind === 'temporary') return inherited;
    const found = own.kind === 'found' ? own.record : inherited?.kind === 'found' ? inherited.record : null;
    // A subdomain covered by its organization's record gets `sp=`, falling back to `p=` (§6.3).
    const policy = found && own.kind !== 'found' ? (found.subdomainPolicy ?? found.policy) : (found?.policy ?? null);
    const aspf = found?.aspf ?? 'r';
    const spfAligned = aspf === 's' ? sameHost(returnPathHost, domain) : organizationalDomain(returnPathHost) === organizationalDomain(domain);
    return {
      kind: 'report',
      report: {
        present: found !== null,
        record: found?.text ?? null,
        policy,
        dkimAligned: true,
        spfAligned,
        checkedAt: now.toISOString(),
      },
    };
  }

  private async lookup(name: string): Promise<Lookup> {
    const answer = await this.dns.resolveTxt(`_dmarc.${name}`);
    switch (answer.kind) {
      case 'timeout':
      case 'error':
        return { kind: 'temporary', message: answer.message };
      case 'nxdomain':
      case 'nodata':
        return { kind: 'none' };
      case 'answer': {
        const records = answer.values.map(parseDmarc).filter((r): r is DmarcRecord => r !== null);
        return records.length === 1 ? { kind: 'found', record: records[0] } : { kind: 'none' };
      }
    }
  }
}
