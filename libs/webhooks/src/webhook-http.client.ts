import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { promisify } from 'node:util';
import { type AddressAllowList, classifyHost } from './endpoint-address';

/** Bytes of the receiver's response kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** What one POST came to; the dispatcher turns it into a message outcome. */
export type HttpAttemptResult =
  | { kind: 'response'; statusCode: number; retryAfter: string | undefined; excerpt: string; durationMs: number }
  | { kind: 'refused'; error: string; durationMs: number }
  | { kind: 'error'; error: string; durationMs: number };

export interface HttpAttemptRequest {
  endpoint: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** http:// endpoints are delivered to (WEBHOOK_ALLOW_HTTP); otherwise refused. */
  allowHttp: boolean;
  /** Private / loopback addresses let through anyway (WEBHOOK_ALLOWED_ADDRESSES). */
  allowed: AddressAllowList;
  /**
   * Keep-alive connections and recent address checks to reuse (the dispatcher's); without it
   * every attempt resolves the host and opens a connection of its own.
   */
  connections?: EndpointConnections;
}

export type ResolveAll = (host: string) => Promise<LookupAddress[]>;
const resolveAll: ResolveAll = (host) => promisify(dnsLookup)(host, { all: true, verbatim: true });

/**
 * Resolves the endpoint's host once and picks the first address Herald may connect to; refuses
 * when any resolved address is private, link-local, metadata, or loopback and not on the
 * allowlist, so a name that mixes public and private records cannot be used to reach inside.
 */
export async function checkedAddress(hostname: string, allowed: AddressAllowList, resolve: ResolveAll = resolveAll): Promise<LookupAddress | string> {
  const host = hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    return `could not resolve ${host}: ${(error as Error).message}`;
  }
  if (addresses.length === 0) return `${host} has no addresses`;
  for (const a of addresses) {
    const kind = classifyHost(a.address);
    if (kind !== 'public' && !allowed(a.address)) return `refused: ${host} resolves to ${kind} address ${a.address}`;
  }
  return addresses[0]!;
}

/**
 * POSTs once, connecting to the address checked above (the `lookup` hook pins it, so a second
 * DNS answer cannot redirect the request; TLS still verifies the hostname). Redirects are not
 * followed; the whole attempt, body included, must finish within the timeout.
 */
export async function postWebhook(req: HttpAttemptRequest, resolve: ResolveAll = resolveAll): Promise<HttpAttemptResult> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  const url = new URL(req.endpoint);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && req.allowHttp)) {
    return { kind: 'refused', error: `refused: ${url.protocol} endpoints are not allowed (WEBHOOK_ALLOW_HTTP)`, durationMs: elapsed() };
  }
  const address = req.connections
    ? await req.connections.checkedAddress(url.hostname, req.allowed, resolve)
    : await checkedAddress(url.hostname, req.allowed, resolve);
  if (typeof address === 'string') return { kind: 'refused', error: address, durationMs: elapsed() };
  const pinned = pinnedLookup(address);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const agent = req.connections ? req.connections.agent(url, address) : false;
  return new Promise<HttpAttemptResult>((resolvePromise) => {
    let settled = false;
    // A connection that answered in full goes back to the pool (keep-alive); any other is destroyed.
    const finish = (result: HttpAttemptResult, reusable = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!reusable) request.destroy();
      resolvePromise(result);
    };
    const request = send(url, {
      method: 'POST',
      lookup: pinned,
      agent,
      headers: { ...req.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body).toString() },
    });
    const timer = setTimeout(() => finish({ kind: 'error', error: `timed out after ${req.timeoutMs} ms`, durationMs: elapsed() }), req.timeoutMs);
    request.on('error', (error) => finish({ kind: 'error', error: error.message || String(error), durationMs: elapsed() }));
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < RESPONSE_EXCERPT_BYTES) chunks.push(chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept));
        kept += chunk.length;
      });
      response.on('error', (error) => finish({ kind: 'error', error: error.message, durationMs: elapsed() }));
      response.on('end', () =>
        finish(
          {
            kind: 'response',
            statusCode: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            excerpt: Buffer.concat(chunks).toString('utf8'),
            durationMs: elapsed(),
          },
          true,
        ),
      );
    });
    request.end(req.body);
  });
}

/** A `lookup` that answers with the checked address only, so the connection goes where the check said. */
function pinnedLookup(address: LookupAddress): LookupFunction {
  return (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
}

export interface EndpointConnectionsOptions {
  /** How long an address check (resolution + SSRF verdict) of a host is reused before resolving it again. */
  recheckMs: number;
  /** Connections open at once to one checked address (in use + idle). */
  maxSocketsPerAddress: number;
  /** Idle keep-alive connections kept per checked address. */
  maxFreeSocketsPerAddress: number;
  /** An idle connection is closed after this long. */
  idleTimeoutMs: number;
}

export const DEFAULT_ENDPOINT_CONNECTIONS: EndpointConnectionsOptions = {
  recheckMs: 10_000,
  maxSocketsPerAddress: 64,
  maxFreeSocketsPerAddress: 256,
  idleTimeoutMs: 4_000,
};

interface CachedCheck {
  until: number;
  result: Promise<LookupAddress | string>;
}

/**
 * The dispatcher's connection reuse. A host's address check is kept for `recheckMs` (then the
 * host is resolved and checked again, as every attempt did before), keyed also by the allowlist
 * and resolver it was made with. Keep-alive connections are pooled per (protocol, checked
 * address, port, TLS servername): one agent each, whose lookup is pinned to that address, so a
 * connection is never reused for another address, and an address that a re-check no longer
 * gives is no longer used (its agent is closed once idle).
 */
export class EndpointConnections {
  private readonly checks = new WeakMap<ResolveAll, WeakMap<AddressAllowList, Map<string, CachedCheck>>>();
  private readonly hostChecks = new Set<Map<string, CachedCheck>>();
  private readonly agents = new Map<string, { agent: HttpAgent; lastUsed: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: EndpointConnectionsOptions = DEFAULT_ENDPOINT_CONNECTIONS) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1_000, options.recheckMs));
    this.sweeper.unref();
  }

  checkedAddress(hostname: string, allowed: AddressAllowList, resolve: ResolveAll = resolveAll): Promise<LookupAddress | string> {
    let byAllowed = this.checks.get(resolve);
    if (!byAllowed) this.checks.set(resolve, (byAllowed = new WeakMap()));
    let byHost = byAllowed.get(allowed);
    if (!byHost) {
      byAllowed.set(allowed, (byHost = new Map()));
      this.hostChecks.add(byHost);
    }
    const now = Date.now();
    const cached = byHost.get(hostname);
    if (cached && cached.until > now) return cached.result;
    const result = checkedAddress(hostname, allowed, resolve);
    byHost.set(hostname, { until: now + this.options.recheckMs, result });
    // A failed resolution is not kept: the next attempt asks DNS again.
    void result.then((r) => {
      if (typeof r === 'string' && r.startsWith('could not resolve') && byHost.get(hostname)?.result === result) byHost.delete(hostname);
    });
    return result;
  }

  /** The keep-alive agent for this endpoint at this checked address. */
  agent(url: URL, address: LookupAddress): HttpAgent {
    const https = url.protocol === 'https:';
    const port = url.port || (https ? '443' : '80');
    const servername = url.hostname.replace(/^\[|\]$/g, '');
    const key = `${url.protocol}//${address.address}/${address.family}:${port}#${servername}`;
    let entry = this.agents.get(key);
    if (!entry) {
      const options = {
        keepAlive: true,
        maxSockets: this.options.maxSocketsPerAddress,
        maxFreeSockets: this.options.maxFreeSocketsPerAddress,
        timeout: this.options.idleTimeoutMs,
        scheduling: 'lifo' as const,
        lookup: pinnedLookup(address),
      };
      entry = { agent: https ? new HttpsAgent(options) : new HttpAgent(options), lastUsed: 0 };
      this.agents.set(key, entry);
    }
    entry.lastUsed = Date.now();
    return entry.agent;
  }

  /** Forgets expired checks; closes agents unused for longer than a re-check interval (their address may be stale). */
  private sweep(): void {
    const now = Date.now();
    for (const byHost of this.hostChecks) for (const [host, check] of byHost) if (check.until <= now) byHost.delete(host);
    const stale = now - Math.max(this.options.recheckMs, this.options.idleTimeoutMs);
    for (const [key, entry] of this.agents) {
      const busy = Object.keys(entry.agent.sockets).length > 0 || Object.keys(entry.agent.requests).length > 0;
      if (entry.lastUsed < stale && !busy) {
        entry.agent.destroy();
        this.agents.delete(key);
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.hostChecks.clear();
    for (const entry of this.agents.values()) entry.agent.destroy();
    this.agents.clear();
  }
}
