import type { Transaction } from '@herald/database';
import { Domain } from '../domain.types';

/** What a listener does once the transaction it recorded in has committed (publish an event). */
export type AfterCommit = () => Promise<void> | void;

/**
 * Who hears about verification results, so that the domains service can publish
 * `domain.updated` and activate DKIM keys without the verifier depending on it. Provide it under
 * DOMAIN_STATUS_LISTENER (see DomainVerificationModule.forRoot).
 */
export interface DomainStatusListener {
  /**
   * The domain's status changed; `domain` is as saved. Called in `tx`, the transaction that saves
   * it, so that what the listener records (its event) commits with the status or not at all: a
   * throw rolls the save back. What it answers runs after the commit.
   */
  statusChanged(domain: Domain, tx: Transaction): Promise<AfterCommit | void> | AfterCommit | void;
  /**
   * Every check of a domain ends here: its DKIM keys' `dns_status` has just been saved. Failures
   * are logged, never undo the saved verification.
   */
  dkimKeysChecked(domainId: string): Promise<void> | void;
}

export const DOMAIN_STATUS_LISTENER = Symbol('DOMAIN_STATUS_LISTENER');
