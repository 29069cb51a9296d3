import type { DomainsRepository, DomainsService } from '@herald/domains';
import type { DeliveryConfig } from '../delivery.config';
import { SenderIdentities } from './sender-identity';

const DOMAIN = { id: 'dom-1', name: 'acme.test', status: 'verified', customReturnPath: 'send', tls: 'opportunistic' };
const KEY = { algorithm: 'rsa-sha256', selector: 's1', privateKey: 'PEM' };

function identities(cacheMs: number) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const findByName = jest.fn(async () => {
    await gate;
    return DOMAIN;
  });
  const signingKeys = jest.fn(async () => [KEY]);
  const config = { DOMAIN_CACHE_MS: cacheMs } as unknown as DeliveryConfig;
  const service = new SenderIdentities(config, { findByName } as unknown as DomainsRepository, { signingKeys } as unknown as DomainsService);
  return { service, findByName, signingKeys, release };
}

describe('SenderIdentities', () => {
  it('loads a domain once for every email that asks while the load is under way (a worker starting on a backlog)', async () => {
    const { service, findByName, signingKeys, release } = identities(60_000);
    const lookups = Array.from({ length: 50 }, () => service.lookup('team-1', 'acme.test'));
    release();
    const results = await Promise.all(lookups);
    expect(findByName).toHaveBeenCalledTimes(1);
    expect(signingKeys).toHaveBeenCalledTimes(1);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatchObject({ ok: true, identity: { signing: { domainName: 'acme.test', selector: 's1' } } });
    // Then from the cache, and another domain loads on its own.
    await service.lookup('team-1', 'acme.test');
    expect(findByName).toHaveBeenCalledTimes(1);
    await service.lookup('team-1', 'other.test');
    expect(findByName).toHaveBeenCalledTimes(2);
  });

  it('without a cache (DOMAIN_CACHE_MS 0) loads again once the shared load has finished', async () => {
    const { service, findByName, release } = identities(0);
    release();
    await Promise.all([service.lookup('team-1', 'acme.test'), service.lookup('team-1', 'acme.test')]);
    expect(findByName).toHaveBeenCalledTimes(1);
    await service.lookup('team-1', 'acme.test');
    expect(findByName).toHaveBeenCalledTimes(2);
  });

  it('a failed load is not kept: the next lookup tries again', async () => {
    const { service, findByName, release } = identities(60_000);
    release();
    findByName.mockRejectedValueOnce(new Error('timeout exceeded when trying to connect'));
    await expect(service.lookup('team-1', 'acme.test')).rejects.toThrow('timeout exceeded');
    await expect(service.lookup('team-1', 'acme.test')).resolves.toMatchObject({ ok: true });
    expect(findByName).toHaveBeenCalledTimes(2);
  });
});
