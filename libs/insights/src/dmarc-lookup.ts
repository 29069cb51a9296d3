import { Injectable } from '@nestjs/common';
import { DmarcInspector, type Domain } from '@herald/domains';
import type { DmarcFacts } from './insight.types';

/** A DMARC answer is reused this long for every email of the domain. */
const CACHE_MS = 5 * 60_000;
const CACHE_SIZE = 10_000;

/**
 * The DMARC record that applies to a sending domain, through the domains context's inspector (its
 * resolver honours DNS_SERVERS), cached per domain name: a page of insights for many emails of
 * one domain costs one lookup. When DNS gives no answer, the domain's last verification report
 * stands in; without one, the answer is `unknown` and is not cached.
 */
@Injectable()
export class DmarcLookup {
  private readonly cache = new Map<string, { facts: DmarcFacts; until: number }>();

  constructor(private readonly inspector: DmarcInspector) {}

  async facts(name: string, domain: Domain | null, now = Date.now()): Promise<DmarcFacts> {
    const key = name.toLowerCase();
    const cached = this.cache.get(key);
    if (cached && cached.until > now) return cached.facts;
    const returnPath = `${domain?.customReturnPath ?? 'send'}.${key}`;
    const inspection = await this.inspector.inspect(key, returnPath);
    if (inspection.kind === 'temporary') return fromReport(domain?.dmarc ?? null);
    const { report } = inspection;
    const facts: DmarcFacts = report.present ? { kind: 'found', record: report.record ?? '', policy: report.policy } : { kind: 'missing' };
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { facts, until: now + CACHE_MS });
    return facts;
  }
}

function fromReport(report: Domain['dmarc']): DmarcFacts {
  if (!report) return { kind: 'unknown' };
  return report.present ? { kind: 'found', record: report.record ?? '', policy: report.policy } : { kind: 'missing' };
}
