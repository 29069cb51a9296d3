import { Injectable } from '@nestjs/common';
import type { Transaction } from '@herald/database';
import { DKIM_RETIREMENT_GRACE_MS } from './dkim-rotation';
import { DomainEvents } from './domain-events';
import type { Domain } from './domain.types';
import { DomainsService } from './domains.service';
import type { AfterCommit, DomainStatusListener } from './verification/domain-status.listener';
import { heraldClock } from '@herald/core';

/**
 * What the domains context does when the verifier reports (provide it as the verifier's
 * DOMAIN_STATUS_LISTENER): a status change is a `domain.updated` event, recorded with the saved
 * status; a finished DKIM check moves keys along their life (a verified pending key signs,
 * replaced keys retire after the grace).
 */
@Injectable()
export class DomainVerificationListener implements DomainStatusListener {
  constructor(
    private readonly domains: DomainsService,
    private readonly events: DomainEvents,
  ) {}

  async statusChanged(domain: Domain, tx: Transaction): Promise<AfterCommit> {
    const recorded = await this.events.record(tx, 'domain.updated', domain);
    return () => this.events.publish(recorded);
  }

  async dkimKeysChecked(domainId: string): Promise<void> {
    await this.domains.activateVerifiedKeys(domainId);
    await this.domains.retireKeys(domainId, new Date(heraldClock.nowMs() - DKIM_RETIREMENT_GRACE_MS));
  }
}
