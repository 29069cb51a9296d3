import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
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
  const address = await checkedAddress(url.hostname, req.allowed, resolve);
  if (typeof address === 'string') return { kind: 'refused', error: address, durationMs: elapsed() };
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpAttemptResult>((resolvePromise) => {
    let settled = false;
    const finish = (result: HttpAttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolvePromise(result);
    };
    const request = send(url, {
      method: 'POST',
      lookup: pinned,
      agent: false,
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
        finish({
          kind: 'response',
          statusCode: response.statusCode ?? 0,
          retryAfter: response.headers['retry-after'],
          excerpt: Buffer.concat(chunks).toString('utf8'),
          durationMs: elapsed(),
        }),
      );
    });
    request.end(req.body);
  });
}
