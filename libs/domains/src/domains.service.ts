import { Inject, Injectable } from '@nestjs/common';
import { heraldClock, HeraldError, isUuid, newId } from '@herald/core';
import { dkimEncryptionKey, decryptPrivateKey, encryptPrivateKey, generateDkimKey, newSelector } from './dkim-key.crypto';
import { planActivation, planRetirement, rotatedAlgorithms, rotationInProgress } from './dkim-rotation';
import { buildDnsRecords, carryVerification } from './dns-records.builder';
import { DomainEvents } from './domain-events';
import { DOMAINS_CONFIG, type DomainsConfig } from './domains.config';
import { validateCreateDomain, validateUpdateDomain } from './domain-input.validation';
import {
  type CreatedDomainBody,
  type DeletedDomain,
  type DomainBody,
  type DomainList,
  type DomainReference,
  presentCreatedDomain,
  presentDeletedDomain,
  presentDomain,
  presentDomainList,
  presentDomainReference,
} from './domain.presenter';
import { validateDomainListQuery } from './domain-query.validation';
import type { DkimAlgorithm, DkimKey, DkimKeyState, Domain, DomainPause, DomainRecord } from './domain.types';
import { DomainsRepository, isDomainNameTaken, NewDkimKey } from './domains.repository';

/** Who adds a domain: the team, and its home region (a domain's region when none is given). */
export interface DomainOwner {
  teamId: string;
  homeRegion: string;
}

/** An active key, decrypted to sign with (nodemailer's `dkim.privateKey` takes the PEM). */
export interface SigningKey {
  keyId: string;
  selector: string;
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. */
  privateKey: string;
}

const notFound = () => new HeraldError('not_found', 'Domain not found');
/** 403 `validation_error`, whichever team holds the name (telling would reveal another team's domains). */
const registeredAlready = (name: string) => new HeraldError('forbidden_from_domain', `The domain ${name} has been registered already.`);

/** Sending domains: the /domains API, and the DKIM key life cycle the verifier drives. */
@Injectable()
export class DomainsService {
  private readonly encryptionKey: Buffer;

  constructor(
    @Inject(DOMAINS_CONFIG.token) private readonly config: DomainsConfig,
    private readonly domains: DomainsRepository,
    private readonly events: DomainEvents,
  ) {
    this.encryptionKey = dkimEncryptionKey(config);
  }

  async create(owner: DomainOwner, body: unknown): Promise<CreatedDomainBody> {
    const input = validateCreateDomain(body, this.config.HERALD_REGIONS);
    const region = input.region ?? this.homeRegion(owner);
    // Spares generating keys for a name already taken; the insert below is still what decides.
    if (await this.domains.findAnyByName(input.name)) throw registeredAlready(input.name);
    const id = newId();
    const keys = await this.newKeys(id, input.dkimAlgorithms, [], 'active');
    const { name, customReturnPath, openTracking, clickTracking, trackingSubdomain, tls } = input;
    const settings = { region, customReturnPath, openTracking, clickTracking, trackingSubdomain, tls };
    try {
      // The unique index on the name decides between concurrent creations.
      const records = buildDnsRecords(this.config, settings, keys);
      const domain = await this.events.change('domain.created', async (tx) => {
        const created = await this.domains.create({ id, teamId: owner.teamId, name, ...settings, records }, keys, tx);
        return { result: created, announce: created };
      });
      return presentCreatedDomain(domain);
    } catch (error) {
      if (isDomainNameTaken(error)) throw registeredAlready(name);
      throw error;
    }
  }

  async list(teamId: string, query: unknown): Promise<DomainList> {
    const page = validateDomainListQuery(query);
    const { items, hasMore } = page ? await this.domains.listPage(teamId, page) : { items: await this.domains.list(teamId), hasMore: false };
    return presentDomainList({ items, hasMore });
  }

  async get(teamId: string, id: string): Promise<DomainBody> {
    return presentDomain(await this.find(teamId, id));
  }

  /** Tracking and TLS settings; a new tracking subdomain changes the Tracking record. */
  async update(teamId: string, id: string, body: unknown): Promise<DomainReference> {
    assertId(id);
    const plan = (domain: Domain) => {
      const settings = validateUpdateDomain(body, domain);
      return Object.keys(settings).length ? { settings } : null;
    };
    const result = await this.events.change('domain.updated', async (tx) => {
      const modified = await this.domains.modify(teamId, id, plan, this.rebuildRecords, tx);
      return { result: modified, announce: modified?.changed ? modified.domain : null };
    });
    if (!result) throw notFound();
    return presentDomainReference(id);
  }

  async remove(teamId: string, id: string): Promise<DeletedDomain> {
    assertId(id);
    const deleted = await this.events.change('domain.deleted', async (tx) => {
      const found = await this.domains.delete(teamId, id, tx);
      return { result: found, announce: found };
    });
    if (!deleted) throw notFound();
    return presentDeletedDomain(id);
  }

  /** Asks for a DNS check: the verifier takes it at its next pass. A domain never checked becomes `pending`. */
  async verify(teamId: string, id: string): Promise<DomainReference> {
    const before = await this.find(teamId, id);
    await this.events.change('domain.updated', async (tx) => {
      if (!(await this.domains.requestVerification(teamId, id, heraldClock.now(), tx))) throw notFound();
      const after = before.status === 'not_started' ? await this.domains.get(teamId, id, tx) : null;
      return { result: null, announce: after && after.status !== before.status ? after : null };
    });
    return presentDomainReference(id);
  }

  /**
   * The reputation guardrail's pause (libs/metrics): new sends from the domain are refused with
   * `domain_paused` until an owner resumes it. Announced with `domain.updated`; a domain paused
   * already stays as it was. Answers whether this call paused it.
   */
  async pause(teamId: string, id: string, pause: DomainPause): Promise<boolean> {
    const paused = await this.events.change('domain.updated', async (tx) => {
      const domain = await this.domains.pause(teamId, id, pause, tx);
      return { result: domain !== null, announce: domain };
    });
    return paused;
  }

  /** Lifts the guardrail's pause (announced with `domain.updated`); a domain not paused is answered as it is. */
  async resume(teamId: string, id: string): Promise<DomainBody> {
    const before = await this.find(teamId, id);
    const resumed = await this.events.change('domain.updated', async (tx) => {
      const domain = await this.domains.resume(teamId, id, tx);
      return { result: domain, announce: domain };
    });
    return presentDomain(resumed ?? before);
  }

  /**
   * Starts a key rotation: a new pending key (new selector) per algorithm the domain signs with,
   * whose DKIM record joins `records`. The active keys keep signing until the verifier sees the
   * new record and calls activateVerifiedKeys. Answers the domain with its records.
   */
  async rotateDkimKey(teamId: string, id: string): Promise<DomainBody> {
    const current = await this.find(teamId, id);
    const taken = await this.domains.selectors(current.id);
    const fresh = await this.newKeys(current.id, rotatedAlgorithms(await this.domains.keys(current.id)), taken, 'pending');
    const plan = (_: Domain, keys: DkimKey[]) => {
      if (rotationInProgress(keys)) {
        throw new HeraldError(
          'validation_error',
          'A DKIM key rotation is already in progress: publish its record and verify the domain before rotating again.',
        );
      }
      return { insertKeys: fresh };
    };
    const result = await this.events.change('domain.updated', async (tx) => {
      const modified = await this.domains.modify(teamId, id, plan, this.rebuildRecords, tx);
      return { result: modified, announce: modified?.domain ?? null };
    });
    if (!result) throw notFound();
    return presentDomain(result.domain);
  }

  /**
   * For the verifier, after it saved a check: each pending key whose record verified becomes
   * active and the key it replaces starts retiring (see dkim-rotation.ts). Answers what changed.
   */
  async activateVerifiedKeys(domainId: string): Promise<{ activated: string[]; retiring: string[] }> {
    const changes = await this.changeKeyStates(domainId, (keys) => planActivation(keys));
    return {
      activated: changes.filter((c) => c.state === 'active').map((c) => c.keyId),
      retiring: changes.filter((c) => c.state === 'retiring').map((c) => c.keyId),
    };
  }

  /**
   * For the verifier's periodic pass: retiring keys whose successor was activated at `olderThan`
   * or before are retired and their records withdrawn (a `domain.updated` event says so).
   * Answers the retired key ids.
   */
  async retireKeys(domainId: string, olderThan: Date): Promise<string[]> {
    const changes = await this.changeKeyStates(domainId, (keys) => planRetirement(keys, olderThan), true);
    return changes.map((c) => c.keyId);
  }

  /** The domain's active keys, decrypted: what the delivery engine signs with. */
  async signingKeys(domainId: string): Promise<SigningKey[]> {
    const keys = await this.domains.keys(domainId);
    return keys
      .filter((key) => key.state === 'active')
      .map((key) => ({
        keyId: key.id,
        selector: key.selector,
        algorithm: key.algorithm,
        privateKey: decryptPrivateKey(key.privateKeyEncrypted, this.encryptionKey),
      }));
  }

  private async changeKeyStates(
    domainId: string,
    plan: (keys: DkimKey[]) => { keyId: string; state: DkimKeyState }[],
    announce = false,
  ): Promise<{ keyId: string; state: DkimKeyState }[]> {
    let planned: { keyId: string; state: DkimKeyState }[] = [];
    const keyStates = (_: Domain, keys: DkimKey[]) => {
      planned = plan(keys);
      return planned.length ? { keyStates: planned } : null;
    };
    const result = await this.events.change('domain.updated', async (tx) => {
      const modified = await this.domains.modify(null, domainId, keyStates, this.rebuildRecords, tx);
      return { result: modified, announce: announce && modified?.changed ? modified.domain : null };
    });
    return result?.changed ? planned : [];
  }

  /** Records rebuilt from the domain and its keys, keeping what verification found for unchanged ones. */
  private readonly rebuildRecords = (domain: Domain, keys: DkimKey[]): DomainRecord[] =>
    carryVerification(domain.records, buildDnsRecords(this.config, domain, keys));

  private async find(teamId: string, id: string): Promise<Domain> {
    assertId(id);
    const domain = await this.domains.get(teamId, id);
    if (!domain) throw notFound();
    return domain;
  }

  private homeRegion(owner: DomainOwner): string {
    if (this.config.HERALD_REGIONS.includes(owner.homeRegion)) return owner.homeRegion;
    // The team's region was removed from HERALD_REGIONS: the domain needs an explicit one.
    const regions = this.config.HERALD_REGIONS.join(', ');
    const message = `Your team's home region ${owner.homeRegion} is not served here: pass \`region\`, one of ${regions}.`;
    throw new HeraldError('invalid_region', message);
  }

  private async newKeys(domainId: string, algorithms: DkimAlgorithm[], taken: string[], state: DkimKeyState): Promise<NewDkimKey[]> {
    const generated = await Promise.all(algorithms.map(generateDkimKey));
    const used = [...taken];
    return generated.map(({ algorithm, publicKey, privateKey }) => {
      const selector = newSelector(algorithm, used);
      used.push(selector);
      const privateKeyEncrypted = encryptPrivateKey(privateKey, this.encryptionKey);
      return { id: newId(), domainId, selector, algorithm, publicKey, privateKeyEncrypted, state };
    });
  }
}

function assertId(id: string): void {
  if (!isUuid(id)) throw new HeraldError('invalid_parameter', 'The `id` must be a valid UUID.');
}
