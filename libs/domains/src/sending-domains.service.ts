import { Inject, Injectable } from '@nestjs/common';
import { HeraldError } from '@herald/core';
import { DOMAINS_CONFIG, type DomainsConfig } from './domains.config';
import { DomainsRepository } from './domains.repository';
import { pauseMessage } from './domain-pause';
import { Domain } from './domain.types';

/** Where an email may be sent from: its verified domain and that domain's region. */
export interface SendingDomain {
  domainId: string;
  name: string;
  region: string;
}

const CACHE_MAX = 10_000;
/** The share of DOMAIN_CACHE_MS after which a cached domain is renewed in the background. */
const REFRESH_AHEAD = 0.75;

/**
 * A domain sends while it is verified, and while a verified domain's DNS answers only with
 * temporary errors (`temporary_failure`, re-checked until it is verified again or failed).
 */
const SENDABLE = new Set<Domain['status']>(['verified', 'temporary_failure']);

/**
 * The enforcement of sending domains on every send path: `from` must be on a domain the team
 * has verified and the reputation guardrail has not paused, and a key restricted to one domain
 * sends only from it. Lookups are cached per process for DOMAIN_CACHE_MS, so the hot path costs
 * a map read.
 */
@Injectable()
export class SendingDomains {
  private readonly cache = new Map<string, { domain: Domain; at: number }>();
  private readonly reading = new Map<string, Promise<Domain | null>>();

  constructor(
    private readonly domains: DomainsRepository,
    @Inject(DOMAINS_CONFIG.token) private readonly config: DomainsConfig,
  ) {}

  /** The domain `fromDomain` (lowercase, punycode) of the team, or a 403 naming it (or its pause). */
  async resolve(teamId: string, fromDomain: string, restrictedDomainId: string | null): Promise<SendingDomain> {
    const domain = await this.lookup(teamId, fromDomain);
    if (!domain || !SENDABLE.has(domain.status)) {
      const state = domain ? ` (its status is ${domain.status})` : '';
      throw new HeraldError(
        'forbidden_from_domain',
        `The ${fromDomain} domain is not verified${state}. Add and verify it with POST /domains, then send from it.`,
      );
    }
    if (restrictedDomainId && restrictedDomainId !== domain.id) {
      throw new HeraldError('forbidden_from_domain', `This API key can only send from its own domain, not from ${fromDomain}.`);
    }
    // From the cached row like the checks above: a pause reaches every process within DOMAIN_CACHE_MS.
    if (domain.pause) throw new HeraldError('domain_paused', pauseMessage(domain, domain.pause));
    if (!this.config.HERALD_REGIONS.includes(domain.region)) {
      // Created while the deployment served that region (or by another deployment): accepting the
      // email would leave it queued with no worker to deliver it.
      throw new HeraldError(
        'invalid_region',
        `The ${fromDomain} domain sends from region ${domain.region}, which this deployment does not serve (it serves ${this.config.HERALD_REGIONS.join(', ')}).`,
      );
    }
    return { domainId: domain.id, name: domain.name, region: domain.region };
  }

  /**
   * The cached row while younger than DOMAIN_CACHE_MS; past REFRESH_AHEAD of that, one read in the
   * background renews it, so steady sending never waits for the control plane (another region's
   * database, for a far API). Concurrent misses share one read.
   */
  private async lookup(teamId: string, name: string): Promise<Domain | null> {
    const key = `${teamId}/${name}`;
    const hit = this.cache.get(key);
    const age = hit ? Date.now() - hit.at : Infinity;
    if (hit && age < this.config.DOMAIN_CACHE_MS) {
      if (age >= this.config.DOMAIN_CACHE_MS * REFRESH_AHEAD) void this.read(key, teamId, name).catch(() => undefined);
      return hit.domain;
    }
    this.cache.delete(key);
    return this.read(key, teamId, name);
  }

  private read(key: string, teamId: string, name: string): Promise<Domain | null> {
    const inFlight = this.reading.get(key);
    if (inFlight) return inFlight;
    const reading = this.domains
      .findByName(teamId, name)
      .then((domain) => {
        // Only a domain that may send is cached: one verified a moment ago must not stay refused.
        if (domain && SENDABLE.has(domain.status)) {
          if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
          this.cache.set(key, { domain, at: Date.now() });
        } else this.cache.delete(key);
        return domain;
      })
      .finally(() => this.reading.delete(key));
    this.reading.set(key, reading);
    return reading;
  }
}
