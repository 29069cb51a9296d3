import { Resolver } from 'node:dns/promises';

/** One host to deliver to, with the addresses to try in order (IPv4 first, then IPv6). */
export interface MxHost {
  name: string;
  priority: number;
  addresses: string[];
}

/** Where a domain's mail goes, or why it goes nowhere. */
export type MxResolution =
  | { kind: 'hosts'; hosts: MxHost[] }
  /** RFC 7505: the domain declares it accepts no mail. */
  | { kind: 'null-mx' }
  /** NXDOMAIN, or no MX and no address of its own: a permanent condition. */
  | { kind: 'no-domain' }
  /** SERVFAIL, timeouts, refused queries: try again later. */
  | { kind: 'temporary'; reason: string };

export interface MxResolverOptions {
  /** `ip` or `ip:port`; empty means the system's resolvers. */
  servers: string[];
  /** How long one lookup may take before the domain counts as temporarily unresolvable. */
  timeoutMs: number;
  /** How long an answer is reused; 0 disables the cache. */
  cacheMs: number;
}

/** Answers beyond this many domains evict the oldest, so a spray of one-off domains cannot grow memory. */
const MAX_CACHED_DOMAINS = 10_000;
/** c-ares doubles the timeout on each retry: two tries of t and 2t fit in 3t. */
const TRIES = 2;

const NO_ANSWER = new Set(['ENODATA', 'ENOTFOUND']);
const errorCode = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? String(error);

/** An address lookup: the addresses, none (the name has no such record), or a temporary failure. */
type AddressLookup = { addresses: string[] } | { failure: string };

/**
 * Finds the hosts that receive a domain's mail (RFC 5321 §5.1), asking the configured servers
 * for every name, MX targets included, so tests and split-horizon setups see one consistent view.
 * Never throws: every DNS outcome is a value the transmitter maps to delivered/deferred/bounced.
 */
export class MxResolver {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, { expires: number; resolution: MxResolution }>();

  constructor(private readonly options: MxResolverOptions) {
    this.resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / 3)), tries: TRIES });
    if (options.servers.length) this.resolver.setServers(options.servers);
  }

  async resolve(domain: string): Promise<MxResolution> {
    const key = domain.toLowerCase().replace(/\.$/, '');
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) return withShuffledTies(cached.resolution);
    const resolution = await this.lookup(key);
    // A temporary failure is not remembered: the next message should ask again.
    if (this.options.cacheMs > 0 && resolution.kind !== 'temporary') {
      this.cache.delete(key);
      this.cache.set(key, { expires: Date.now() + this.options.cacheMs, resolution });
      if (this.cache.size > MAX_CACHED_DOMAINS) this.cache.delete(this.cache.keys().next().value as string);
    }
    return withShuffledTies(resolution);
  }

  private async lookup(domain: string): Promise<MxResolution> {
    let records: { exchange: string; priority: number }[];
    try {
      records = await this.resolver.resolveMx(domain);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTFOUND') return { kind: 'no-domain' };
      if (code === 'ENODATA') return this.implicitMx(domain);
      return { kind: 'temporary', reason: `MX lookup for ${domain} failed: ${code}` };
    }
    if (!records.length) return this.implicitMx(domain);
    const isNull = (exchange: string) => exchange === '' || exchange === '.';
    if (records.length === 1 && isNull(records[0].exchange)) return { kind: 'null-mx' };

    const targets = records.filter((record) => !isNull(record.exchange)).sort((a, b) => a.priority - b.priority);
    const lookups = await Promise.all(targets.map((record) => this.addresses(record.exchange)));
    const hosts: MxHost[] = [];
    const failures: string[] = [];
    targets.forEach((record, index) => {
      const found = lookups[index];
      const name = record.exchange.toLowerCase().replace(/\.$/, '');
      if ('failure' in found) failures.push(`${name}: ${found.failure}`);
      else if (found.addresses.length) hosts.push({ name, priority: record.priority, addresses: found.addresses });
      else failures.push(`${name}: no address`);
    });
    if (!hosts.length) return { kind: 'temporary', reason: `no usable MX host for ${domain} (${failures.join('; ')})` };
    return { kind: 'hosts', hosts };
  }

  /** RFC 5321 §5.1: without MX records the domain itself is the host, if it has an address. */
  private async implicitMx(domain: string): Promise<MxResolution> {
    const found = await this.addresses(domain);
    if ('failure' in found) return { kind: 'temporary', reason: `address lookup for ${domain} failed: ${found.failure}` };
    if (!found.addresses.length) return { kind: 'no-domain' };
    return { kind: 'hosts', hosts: [{ name: domain, priority: 0, addresses: found.addresses }] };
  }

  /** A and AAAA together; one family failing temporarily is fine if the other answers. */
  private async addresses(name: string): Promise<AddressLookup> {
    const [v4, v6] = await Promise.all([this.family(() => this.resolver.resolve4(name)), this.family(() => this.resolver.resolve6(name))]);
    if ('failure' in v4 && 'failure' in v6) return v4;
    const addresses = [...('addresses' in v4 ? v4.addresses : []), ...('addresses' in v6 ? v6.addresses : [])];
    if (!addresses.length && ('failure' in v4 || 'failure' in v6)) return 'failure' in v4 ? v4 : v6;
    return { addresses };
  }

  private async family(query: () => Promise<string[]>): Promise<AddressLookup> {
    try {
      return { addresses: await query() };
    } catch (error) {
      const code = errorCode(error);
      return NO_ANSWER.has(code) ? { addresses: [] } : { failure: code };
    }
  }
}

/** RFC 5321 §5.1: hosts of equal preference are tried in random order, spreading the load. */
function withShuffledTies(resolution: MxResolution): MxResolution {
  if (resolution.kind !== 'hosts') return resolution;
  const hosts = resolution.hosts.map((host) => ({ host, tie: Math.random() }));
  hosts.sort((a, b) => a.host.priority - b.host.priority || a.tie - b.tie);
  return { kind: 'hosts', hosts: hosts.map(({ host }) => host) };
}
