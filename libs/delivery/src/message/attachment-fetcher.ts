import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { promisify } from 'node:util';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { type AddressAllowList, classifyHost } from '@herald/core';
import { MessageBuildError } from './message-build-error';

export interface FetchedAttachment {
  content: Buffer;
  /** The response's Content-Type, for attachments sent without one. */
  contentType: string | null;
}

/** Every address a hostname resolves to (node:dns lookup, all: true); tests inject their own. */
export type AttachmentLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface AttachmentFetchOptions {
  /** Deadline for the whole download: every lookup, redirect hop and the body. */
  timeoutMs: number;
  /** Byte budget for the (decoded) body. */
  maxBytes: number;
  /** Private / loopback addresses that may be fetched from anyway (ATTACHMENT_ALLOWED_ADDRESSES); none when absent. */
  allowed?: AddressAllowList;
  lookup?: AttachmentLookup;
}

/** Redirect hops followed after the first request; one more is an error. */
export const MAX_ATTACHMENT_REDIRECTS = 3;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const nothingAllowed: AddressAllowList = () => false;
const systemLookup: AttachmentLookup = (hostname) => promisify(dnsLookup)(hostname, { all: true, verbatim: true });

/**
 * Statuses that will not change on a retry. 408 and 429 are the server asking for patience, so
 * they stay transient like 5xx.
 */
const isPermanentStatus = (status: number): boolean => status >= 400 && status < 500 && status !== 408 && status !== 429;

/**
 * Downloads a `path` attachment over http(s), within a deadline and a byte budget, without
 * letting a customer reach Herald's own network (SSRF): each hop's host is resolved once, every
 * address it resolves to must be public or allowlisted, and the connection goes to exactly the
 * address checked (a second DNS answer cannot move it; Host and TLS SNI stay the URL's). At most
 * MAX_ATTACHMENT_REDIRECTS redirects are followed, each checked the same way. The body is read
 * chunk by chunk so an endless or oversized response is cut off at the cap instead of being
 * buffered whole; Content-Length is checked first to refuse early when the server announces it.
 */
export async function fetchAttachment(path: string, options: AttachmentFetchOptions): Promise<FetchedAttachment> {
  const { timeoutMs, maxBytes } = options;
  const allowed = options.allowed ?? nothingAllowed;
  const lookup = options.lookup ?? systemLookup;
  const original = parseHttpUrl(path);
  const signal = AbortSignal.timeout(timeoutMs);
  let url = original;
  try {
    for (let redirects = 0; ; redirects++) {
      const via = url === original ? `Attachment ${original.href}` : `Attachment ${original.href} redirects to ${url.href}, which`;
      const address = await checkedAddress(url, allowed, lookup, signal, via);
      const response = await get(url, address, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location) {
        response.destroy();
        if (redirects >= MAX_ATTACHMENT_REDIRECTS) {
          throw new MessageBuildError(`Attachment ${original.href} could not be fetched: more than ${MAX_ATTACHMENT_REDIRECTS} redirects.`, true);
        }
        url = redirectTarget(original, url, location);
        continue;
      }
      if (status < 200 || status > 299) {
        response.destroy();
        throw new MessageBuildError(`Attachment ${url.href} could not be fetched: HTTP ${status}.`, isPermanentStatus(status));
      }
      const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
      const announced = Number(response.headers['content-length']);
      if (encoding === 'identity' && Number.isFinite(announced) && announced > maxBytes) {
        response.destroy();
        throw tooLarge(url, maxBytes);
      }
      return { content: await readCapped(decoded(response, encoding), url, maxBytes), contentType: headerValue(response.headers['content-type']) };
    }
  } catch (error) {
    if (error instanceof MessageBuildError) throw error;
    const reason = signal.aborted ? `no complete answer within ${timeoutMs} ms` : describe(error);
    throw new MessageBuildError(`Attachment ${url.href} could not be fetched: ${reason}.`, false);
  }
}

function parseHttpUrl(path: string): URL {
  let url: URL;
  try {
    url = new URL(path);
  } catch {
    throw new MessageBuildError(`Attachment path ${JSON.stringify(path)} is not a valid URL.`, true);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MessageBuildError(`Attachment path ${JSON.stringify(path)} is not an http(s) URL.`, true);
  }
  if (url.username || url.password) {
    throw new MessageBuildError(`Attachment path ${JSON.stringify(redacted(url))} includes credentials, which Herald does not send.`, true);
  }
  return url;
}

function redirectTarget(original: URL, from: URL, location: string): URL {
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    throw new MessageBuildError(`Attachment ${original.href} redirects to ${JSON.stringify(location)}, which is not a valid URL.`, true);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new MessageBuildError(`Attachment ${original.href} redirects to ${JSON.stringify(location)}, which is not an http(s) URL.`, true);
  }
  if (target.username || target.password) target.username = target.password = '';
  return target;
}

/**
 * The one address this hop connects to. An IP-literal host is checked as it is; a hostname is
 * resolved once and refused when any of its addresses is not public and not allowlisted, so a
 * name mixing public and private records cannot be used to reach inside. `via` starts the
 * refusal message ("Attachment <url>" or "Attachment <url> redirects to <url>, which").
 */
async function checkedAddress(
  url: URL,
  allowed: AddressAllowList,
  lookup: AttachmentLookup,
  signal: AbortSignal,
  via: string,
): Promise<LookupAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await abortable(lookup(host), signal);
  if (addresses.length === 0) throw new MessageBuildError(`Attachment ${url.href} could not be fetched: ${host} has no addresses.`, false);
  for (const { address } of addresses) {
    const kind = classifyHost(address);
    if (kind !== 'public' && !allowed(address)) {
      throw new MessageBuildError(`${via} points at a ${kind} address (${address}); Herald does not fetch from private networks.`, true);
    }
  }
  return addresses[0]!;
}

/** One GET to `address`, the URL's host kept for the Host header and TLS (SNI, certificate check). */
function get(url: URL, address: LookupAddress, signal: AbortSignal): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const request: ClientRequest = send(url, {
      method: 'GET',
      lookup: pinned,
      agent: false,
      signal,
      headers: { accept: '*/*', 'accept-encoding': 'gzip, deflate, br', 'user-agent': 'Herald (attachment fetcher)' },
    });
    request.on('error', reject);
    request.once('response', resolve);
    request.end();
  });
}

/** The body as the server meant it: fetch decoded gzip/deflate/br itself; the cap applies after decoding. */
function decoded(response: IncomingMessage, encoding: string): NodeJS.ReadableStream {
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  if (!decoder) return response;
  response.on('error', (error) => decoder.destroy(error));
  decoder.on('close', () => response.destroy());
  return response.pipe(decoder);
}

async function readCapped(body: NodeJS.ReadableStream, url: URL, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += bytes.byteLength;
    // Leaving the loop by a throw destroys the stream, so the rest is never downloaded.
    if (total > maxBytes) throw tooLarge(url, maxBytes);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, total);
}

/** Settles with `promise`, or rejects as soon as the deadline passes (a slow resolver counts too). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

const headerValue = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? (value[0] ?? null) : (value ?? null));

function redacted(url: URL): string {
  const copy = new URL(url.href);
  copy.username = copy.password = '';
  return copy.href;
}

const tooLarge = (url: URL, maxBytes: number): MessageBuildError =>
  new MessageBuildError(`Attachment ${url.href} is larger than the ${maxBytes} bytes the email may still hold.`, true);

/** Socket errors sometimes carry their reason in `cause`; that is the part worth logging. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
