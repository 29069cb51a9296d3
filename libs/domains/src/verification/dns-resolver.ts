import { Resolver } from 'node:dns/promises';
import { Inject, Injectable } from '@nestjs/common';
import { DOMAINS_CONFIG, type DomainsConfig } from '../domains.config';

export interface MxAnswer {
  exchange: string;
  priority: number;
}

/**
 * What one DNS question got, as a value: an answer, a definite absence (NXDOMAIN: the name does
 * not exist; NODATA: it exists without records of that type), or no usable answer (timeout,
 * SERVFAIL, refused, unreachable server).
 */
export type DnsOutcome<T> = { kind: 'answer'; values: T[] } | { kind: 'nxdomain' | 'nodata' } | { kind: 'timeout' | 'error'; message: string };

/** A resolver attempt gets a third of the budget; c-ares doubles it for the retry, so both fit. */
const TRIES = 2;
const ATTEMPT_SHARE = 3;

/**
 * DNS lookups for domain verification (and MX lookups), through DNS_SERVERS (`ip` or `ip:port`;
 * empty = the system's resolvers). Every question gets a fresh c-ares channel: c-ares caches
 * answers per channel, and a check must see what DNS says now, not what it said an hour ago. A
 * question is bounded by DNS_TIMEOUT_MS in total, however many servers are configured.
 */
@Injectable()
export class DnsResolver {
  constructor(@Inject(DOMAINS_CONFIG.token) private readonly config: DomainsConfig) {}

  /** TXT records, each with its character-strings joined (RFC 7208 §3.3, RFC 6376 §3.6.2.2). */
  resolveTxt(name: string): Promise<DnsOutcome<string>> {
    return this.ask(name, (r) => r.resolveTxt(name).then((rows) => rows.map((chunks) => chunks.join(''))));
  }

  resolveMx(name: string): Promise<DnsOutcome<MxAnswer>> {
    return this.ask(name, (r) => r.resolveMx(name).then((rows) => rows.map(({ exchange, priority }) => ({ exchange, priority }))));
  }

  resolveCname(name: string): Promise<DnsOutcome<string>> {
    return this.ask(name, (r) => r.resolveCname(name));
  }

  resolveA(name: string): Promise<DnsOutcome<string>> {
    return this.ask(name, (r) => r.resolve4(name));
  }

  resolveAaaa(name: string): Promise<DnsOutcome<string>> {
    return this.ask(name, (r) => r.resolve6(name));
  }

  private async ask<T>(name: string, query: (resolver: Resolver) => Promise<T[]>): Promise<DnsOutcome<T>> {
    const budget = this.config.DNS_TIMEOUT_MS;
    const resolver = new Resolver({ timeout: Math.max(1, Math.floor(budget / ATTEMPT_SHARE)), tries: TRIES });
    if (this.config.DNS_SERVERS.length) resolver.setServers(this.config.DNS_SERVERS);
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      resolver.cancel();
    }, budget);
    try {
      const values = await query(resolver);
      return values.length ? { kind: 'answer', values } : { kind: 'nodata' };
    } catch (error) {
      return timedOut ? { kind: 'timeout', message: `no answer for ${name} within ${budget} ms` } : failure(name, error);
    } finally {
      clearTimeout(deadline);
    }
  }
}

/** Maps c-ares error codes (node:dns constants) to outcomes. */
function failure(name: string, error: unknown): DnsOutcome<never> {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOTFOUND':
      return { kind: 'nxdomain' };
    case 'ENODATA':
      return { kind: 'nodata' };
    case 'ETIMEOUT':
    case 'ECANCELLED':
      return { kind: 'timeout', message: `no answer for ${name} (${code})` };
    case 'ESERVFAIL':
      return { kind: 'error', message: `SERVFAIL for ${name}` };
    case 'EREFUSED':
      return { kind: 'error', message: `query for ${name} refused` };
    default:
      return { kind: 'error', message: `${code ?? 'DNS error'} for ${name}: ${(error as Error).message}` };
  }
}
