import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { heraldClock, PeriodicJob } from '@herald/core';
import { Domain } from '../domain.types';
import { DOMAINS_CONFIG, type DomainsConfig } from '../domains.config';
import { DomainChecksRepository } from './domain-checks.repository';
import { DomainVerifier } from './domain-verifier.service';

/**
 * Verifies the domains whose check is due (requested through POST /domains/:id/verify, waiting
 * for their records, or up for their periodic recheck). Domains are claimed with SKIP LOCKED and
 * leased by moving their next check past the time a check can take, in a short transaction:
 * any number of schedulers (API processes, regions) share the work without holding a database
 * connection during DNS lookups, and a domain whose verifier died is taken again after its lease.
 */
@Injectable()
export class VerificationScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  /** How often due domains are looked for. Static so that a test can shorten it before boot. */
  static pollIntervalMs = 5000;
  /** Domains claimed, and checked concurrently, per batch. */
  static batchSize = 20;

  private readonly logger = new Logger(VerificationScheduler.name);
  private readonly job = new PeriodicJob(
    () => this.drain(),
    () => VerificationScheduler.pollIntervalMs,
    (error) => this.logger.warn(`domain verification pass failed: ${error.message}`),
  );

  constructor(
    @Inject(DOMAINS_CONFIG.token) private readonly config: DomainsConfig,
    private readonly checks: DomainChecksRepository,
    private readonly verifier: DomainVerifier,
  ) {}

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** Verifies everything due now, batch after batch; answers how many domains were checked. */
  runOnce(): Promise<number> {
    return this.job.runOnce();
  }

  private async drain(): Promise<number> {
    let checked = 0;
    while (!this.job.isStopped) {
      const now = heraldClock.now();
      const due = await this.checks.claimDue(now, VerificationScheduler.batchSize, new Date(now.getTime() + this.leaseMs()));
      await Promise.all(due.map((domain) => this.verifyOne(domain)));
      checked += due.length;
      if (due.length < VerificationScheduler.batchSize) break;
    }
    return checked;
  }

  private async verifyOne(domain: Domain): Promise<void> {
    try {
      const outcome = await this.verifier.verify(domain.id);
      if (outcome.changed) this.logger.log(`${domain.name}: ${outcome.previousStatus} → ${outcome.status}`);
    } catch (error) {
      // The lease stands: the domain is due again when it ends.
      this.logger.warn(`verifying ${domain.name} failed: ${(error as Error).message}`);
    }
  }

  /** Longer than a check can take: its lookups run in parallel, the DMARC ones two in a row. */
  private leaseMs(): number {
    return Math.max(60_000, 10 * this.config.DNS_TIMEOUT_MS);
  }
}
