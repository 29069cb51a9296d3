import { Domain } from '../domain.types';

/**
 * Who hears about verification results, so that the domains service can publish
 * `domain.updated` and activate DKIM keys without the verifier depending on it. Provide it under
 * DOMAIN_STATUS_LISTENER (see DomainVerificationModule.forRoot). Failures are logged, never
 * undo the saved verification.
 */
export interface DomainStatusListener {
  /** The domain's status changed; `domain` is as saved. */
  statusChanged(domain: Domain): Promise<void> | void;
  /** Every check of a domain ends here: its DKIM keys' `dns_status` has just been saved. */
  dkimKeysChecked(domainId: string): Promise<void> | void;
}

export const DOMAIN_STATUS_LISTENER = Symbol('DOMAIN_STATUS_LISTENER');
