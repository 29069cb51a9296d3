import { Inject, Injectable } from '@nestjs/common';
import { DomainsRepository, DomainsService, type Domain } from '@herald/domains';
import { effectiveTracking, type EffectiveTracking } from '@herald/tracking';
import { DELIVERY_CONFIG, DeliveryConfig } from '../delivery.config';

/** Who an email is sent as: its verified domain, the key that signs for it, its Return-Path domain. */
export interface SenderIdentity {
  domain: Domain;
  signing: { domainName: string; selector: string; privateKey: string };
  returnPathDomain: string;
  requireTls: boolean;
  /** Open and click tracking in effect for the domain (flags on and its tracking CNAME verified); null for none. */
  tracking: EffectiveTracking | null;
}

export type SenderLookup = { ok: true; identity: SenderIdentity } | { ok: false; reason: string; message: string };

const SENDABLE = new Set<Domain['status']>(['verified', 'temporary_failure']);
const CACHE_MAX = 10_000;

/**
 * The sending domain of an email at the moment of sending. The send path checked it when the
 * email was accepted; a domain that failed verification or was deleted since (or a scheduled
 * email's) must not send, so the worker checks again. Cached for DOMAIN_CACHE_MS with the
 * decrypted key, so the hot path does not decrypt a key per message.
 */
@Injectable()
export class SenderIdentities {
  private readonly cache = new Map<string, { lookup: SenderLookup; at: number }>();
  /**
   * Loads under way, shared by every email that asks meanwhile: a worker starting on a backlog
   * claims hundreds of one domain's emails at once, and a load each would queue them all for the
   * Postgres pool (past its connect timeout on a busy machine: "could not prepare", deferred).
   */
  private readonly loading = new Map<string, Promise<SenderLookup>>();

  constructor(
    @Inject(DELIVERY_CONFIG.token) private readonly config: DeliveryConfig,
    private readonly domains: DomainsRepository,
    private readonly domainsService: DomainsService,
  ) {}

  async lookup(teamId: string, fromDomain: string): Promise<SenderLookup> {
    const key = `${teamId}/${fromDomain}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < this.config.DOMAIN_CACHE_MS) return hit.lookup;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const load = this.load(teamId, fromDomain)
      .then((lookup) => {
        if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(key, { lookup, at: Date.now() });
        return lookup;
      })
      .finally(() => this.loading.delete(key));
    this.loading.set(key, load);
    return load;
  }

  private async load(teamId: string, fromDomain: string): Promise<SenderLookup> {
    const domain = await this.domains.findByName(teamId, fromDomain);
    if (!domain) {
      return { ok: false, reason: 'domain_not_found', message: `The sending domain ${fromDomain} no longer exists.` };
    }
    if (!SENDABLE.has(domain.status)) {
      return { ok: false, reason: 'domain_not_verified', message: `The sending domain ${fromDomain} is ${domain.status}, not verified.` };
    }
    // The signer speaks rsa-sha256, which every receiver verifies.
    const key = (await this.domainsService.signingKeys(domain.id)).find((k) => k.algorithm === 'rsa-sha256');
    if (!key) return { ok: false, reason: 'domain_without_key', message: `The sending domain ${fromDomain} has no active RSA DKIM key.` };
    return {
      ok: true,
      identity: {
        domain,
        signing: { domainName: domain.name, selector: key.selector, privateKey: key.privateKey },
        returnPathDomain: `${domain.customReturnPath}.${domain.name}`,
        requireTls: domain.tls === 'enforced',
        tracking: effectiveTracking(domain),
      },
    };
  }
}
