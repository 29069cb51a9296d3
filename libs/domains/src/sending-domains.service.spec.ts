import type { Domain } from './domain.types';
import type { DomainsConfig } from './domains.config';
import type { DomainsRepository } from './domains.repository';
import { SendingDomains } from './sending-domains.service';

/** A domains repository whose reads are counted and answered when the test says. */
class Reads {
  readonly pending: { resolve: (domain: Domain | null) => void }[] = [];
  findByName = () => new Promise<Domain | null>((resolve) => this.pending.push({ resolve }));
  answer(domain: Domain | null): void {
    this.pending.shift()!.resolve(domain);
  }
}

const domain = (status: Domain['status']) =>
  ({ id: 'd1', teamId: 't1', name: 'acme.test', region: 'us-east-1', status, pause: null }) as unknown as Domain;
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('SendingDomains cache', () => {
  let now = 0;
  let reads: Reads;
  let domains: SendingDomains;

  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    reads = new Reads();
    const config = { DOMAIN_CACHE_MS: 1000, HERALD_REGIONS: ['us-east-1'] } as unknown as DomainsConfig;
    domains = new SendingDomains(reads as unknown as DomainsRepository, config);
  });
  afterEach(() => jest.restoreAllMocks());

  it('shares one read among concurrent misses', async () => {
    const resolved = [domains.resolve('t1', 'acme.test', null), domains.resolve('t1', 'acme.test', null)];
    await flush();
    expect(reads.pending).toHaveLength(1);
    reads.answer(domain('verified'));
    expect((await Promise.all(resolved)).map((d) => d.domainId)).toEqual(['d1', 'd1']);
  });

  it('renews a cached domain in the background past three quarters of its time, and waits for the database only once it expired', async () => {
    const first = domains.resolve('t1', 'acme.test', null);
    await flush();
    reads.answer(domain('verified'));
    await first;

    now += 700;
    await domains.resolve('t1', 'acme.test', null);
    expect(reads.pending).toHaveLength(0);

    now += 100; // 800 ms old: answered from the cache, and one read renews it.
    await domains.resolve('t1', 'acme.test', null);
    await domains.resolve('t1', 'acme.test', null);
    expect(reads.pending).toHaveLength(1);
    reads.answer(domain('verified'));
    await flush();

    now += 1_100; // expired (renewed 1,100 ms ago): the lookup waits for its read.
    const waiting = domains.resolve('t1', 'acme.test', null);
    let settled = false;
    void waiting.then(() => (settled = true));
    await flush();
    expect(settled).toBe(false);
    expect(reads.pending).toHaveLength(1);
    reads.answer(domain('verified'));
    await waiting;
  });

  it('drops a domain that a background renewal finds no longer verified, so the next send is refused', async () => {
    const first = domains.resolve('t1', 'acme.test', null);
    await flush();
    reads.answer(domain('verified'));
    await first;
    now += 800;
    await domains.resolve('t1', 'acme.test', null);
    reads.answer(domain('failed'));
    await flush();
    const refused = domains.resolve('t1', 'acme.test', null);
    await flush();
    reads.answer(domain('failed'));
    await expect(refused).rejects.toMatchObject({ code: 'forbidden_from_domain' });
  });
});
