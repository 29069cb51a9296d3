import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Transaction } from '@herald/database';
import { heraldClock, HeraldError } from '@herald/core';
import { DmarcReport, Domain, DomainRecord, DomainStatus, RecordStatus } from '../domain.types';
import { DOMAINS_CONFIG, type DomainsConfig } from '../domains.config';
import { DomainsRepository, VerificationResult } from '../domains.repository';
import { DmarcInspector } from './dmarc';
import { DomainChecksRepository } from './domain-checks.repository';
import { AfterCommit, DOMAIN_STATUS_LISTENER, DomainStatusListener } from './domain-status.listener';
import { RecordChecker } from './record-checker';
import { absentStatus, decideStatus, nextCheckDelayMs, windowStart } from './verification-policy';

/** What one verification found and, for verify(), saved. */
export interface VerificationOutcome {
  /** The domain with the check applied (as saved, for verify()). */
  domain: Domain;
  previousStatus: DomainStatus;
  status: DomainStatus;
  /** Whether the domain's status changed. */
  changed: boolean;
  /** Every record with its status, what DNS answered (`observed`) and the `problem`, if any. */
  records: DomainRecord[];
  dmarc: DmarcReport | null;
  checkedAt: Date;
  nextCheckAt: Date;
}

/** Saving retries when the domain's records were rebuilt while they were being checked. */
const MAX_ATTEMPTS = 3;

const notFound = () => new HeraldError('not_found', 'Domain not found');
const recordKey = (r: DomainRecord) => `${r.record}\u0000${r.name}\u0000${r.type}\u0000${r.value}\u0000${r.required}`;
const sameRecords = (a: DomainRecord[], b: DomainRecord[]) => a.map(recordKey).join('\u0001') === b.map(recordKey).join('\u0001');

/**
 * Checks a domain's DNS records and decides its status (see verification-policy.ts), then saves
 * the result and tells the listener. Pure of HTTP: the scheduler and the CLI call it.
 */
@Injectable()
export class DomainVerifier {
  private readonly logger = new Logger(DomainVerifier.name);

  constructor(
    @Inject(DOMAINS_CONFIG.token) private readonly config: DomainsConfig,
    private readonly domains: DomainsRepository,
    private readonly checks: DomainChecksRepository,
    private readonly checker: RecordChecker,
    private readonly dmarc: DmarcInspector,
    @Optional() @Inject(DOMAIN_STATUS_LISTENER) private readonly listener: DomainStatusListener | null = null,
  ) {}

  /** The domain, by name and whoever owns it (operators). */
  findByName(name: string): Promise<Domain | null> {
    return this.domains.findAnyByName(name);
  }

  /** Checks the domain now and reports, saving nothing and telling no one (operators' diagnosis). */
  async inspect(domainId: string): Promise<VerificationOutcome> {
    const domain = await this.domains.getById(domainId);
    if (!domain) throw notFound();
    const now = heraldClock.now();
    return this.outcome(domain, domain.status, await this.evaluate(domain, now), now);
  }

  /**
   * Checks the domain now, saves what was found with its next check time, and tells the
   * listener: of a status change in the saving transaction (its event commits with the status),
   * then of the checked DKIM keys.
   */
  async verify(domainId: string): Promise<VerificationOutcome> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const domain = await this.domains.getById(domainId);
      if (!domain) throw notFound();
      const now = heraldClock.now();
      const result = await this.evaluate(domain, now);
      const saved = await this.checks.transaction(async (tx) => {
        const current = await this.checks.lockById(tx, domainId);
        if (!current) throw notFound();
        // A rotation or a PATCH rebuilt the records meanwhile: check what is there now instead.
        if (!sameRecords(current.records, domain.records)) return null;
        await this.domains.saveVerification(domainId, result, tx);
        const outcome = this.outcome(current, current.status, result, now);
        return { outcome, afterCommit: await this.statusChanged(outcome, tx) };
      });
      if (!saved) continue;
      await this.announce(saved.outcome, saved.afterCommit);
      await this.tellDkimKeysChecked(saved.outcome);
      return saved.outcome;
    }
    await this.checks.setNextCheck([domainId], heraldClock.now());
    throw new Error(`the records of domain ${domainId} kept changing while being checked; it is due again`);
  }

  private async evaluate(domain: Domain, now: Date): Promise<VerificationResult> {
    const windowMs = this.config.DOMAIN_VERIFY_WINDOW_HOURS * 3600_000;
    const facts = { lastVerifiedAt: domain.verifiedAt, windowStart: windowStart(domain), windowMs, now };
    const [checks, dmarc] = await Promise.all([
      Promise.all(domain.records.map((record) => this.checker.check(record, domain.name, absentStatus(facts, record)))),
      this.dmarc.inspect(domain.name, `${domain.customReturnPath}.${domain.name}`, now),
    ]);
    const records = domain.records.map((record, i): DomainRecord => {
      const { problem: _staleProblem, observed: _staleObserved, ...expected } = record;
      const { status, observed, problem } = checks[i];
      return { ...expected, status, observed, ...(problem !== undefined && { problem }) };
    });
    const status = decideStatus({ ...facts, previous: domain.status, required: records.filter((r) => r.required).map((r) => r.status) });
    // verifiedAt is the last time the domain was seen verified: a temporary failure counts from it.
    const verifiedAt = status === 'verified' ? now : domain.verifiedAt;
    const waitingSince = status === 'temporary_failure' && verifiedAt ? verifiedAt : facts.windowStart;
    const delay = nextCheckDelayMs(status, waitingSince, now, this.config.DOMAIN_RECHECK_INTERVAL_MS);
    if (dmarc.kind === 'temporary') this.logger.warn(`DMARC lookup for ${domain.name} failed (${dmarc.message}); keeping the last report`);
    return {
      status,
      records,
      dmarc: dmarc.kind === 'report' ? dmarc.report : domain.dmarc,
      dkimStatuses: dkimStatuses(records),
      verifiedAt,
      nextCheckAt: new Date(now.getTime() + delay),
    };
  }

  private outcome(domain: Domain, previousStatus: DomainStatus, result: VerificationResult, now: Date): VerificationOutcome {
    const nextCheckAt = result.nextCheckAt ?? now;
    return {
      domain: {
        ...domain,
        status: result.status,
        records: result.records,
        dmarc: result.dmarc,
        verifiedAt: result.verifiedAt,
        lastCheckedAt: now,
        nextCheckAt,
      },
      previousStatus,
      status: result.status,
      changed: result.status !== previousStatus,
      records: result.records,
      dmarc: result.dmarc,
      checkedAt: now,
      nextCheckAt,
    };
  }

  /** In the saving transaction: a throw (the event could not be recorded) rolls the save back. */
  private async statusChanged(outcome: VerificationOutcome, tx: Transaction): Promise<AfterCommit | null> {
    if (!this.listener || !outcome.changed) return null;
    const afterCommit = await this.listener.statusChanged(outcome.domain, tx);
    return typeof afterCommit === 'function' ? afterCommit : null;
  }

  private async announce(outcome: VerificationOutcome, afterCommit: AfterCommit | null): Promise<void> {
    if (!afterCommit) return;
    try {
      await afterCommit();
    } catch (error) {
      const { domain, previousStatus, status } = outcome;
      this.logger.error(`status change of ${domain.name} (${previousStatus} → ${status}) not announced: ${(error as Error).message}`);
    }
  }

  private async tellDkimKeysChecked({ domain }: VerificationOutcome): Promise<void> {
    if (!this.listener) return;
    try {
      await this.listener.dkimKeysChecked(domain.id);
    } catch (error) {
      this.logger.error(`DKIM key activation for ${domain.name} failed: ${(error as Error).message}`);
    }
  }
}

function dkimStatuses(records: DomainRecord[]): Record<string, RecordStatus> {
  return Object.fromEntries(records.filter((r) => r.record === 'DKIM' && r.dkimKeyId).map((r) => [r.dkimKeyId!, r.status]));
}
