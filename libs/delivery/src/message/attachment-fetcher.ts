import { MessageBuildError } from './message-build-error';

export interface FetchedAttachment {
  content: Buffer;
  /** The response's Content-Type, for attachments sent without one. */
  contentType: string | null;
}

/**
 * Statuses that will not change on a retry. 408 and 429 are the server asking for patience, so
 * they stay transient like 5xx.
 */
const isPermanentStatus = (status: number): boolean => status >= 400 && status < 500 && status !== 408 && status !== 429;

/**
 * Downloads a `path` attachment over http(s), within a deadline and a byte budget. The body is
 * read chunk by chunk so an endless or oversized response is cut off at the cap instead of being
 * buffered whole; Content-Length is checked first to refuse early when the server announces it.
 */
export async function fetchAttachment(path: string, timeoutMs: number, maxBytes: number): Promise<FetchedAttachment> {
  const url = parseHttpUrl(path);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { signal, redirect: 'follow' });
    if (!response.ok) {
      await response.body?.cancel();
      throw new MessageBuildError(`Attachment ${url.href} could not be fetched: HTTP ${response.status}.`, isPermanentStatus(response.status));
    }
    const announced = Number(response.headers.get('content-length'));
    if (Number.isFinite(announced) && announced > maxBytes) {
      await response.body?.cancel();
      throw tooLarge(url, maxBytes);
    }
    return { content: await readCapped(response, url, maxBytes), contentType: response.headers.get('content-type') };
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
  return url;
}

async function readCapped(response: Response, url: URL, maxBytes: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    // Leaving the loop by a throw cancels the stream, so the rest is never downloaded.
    if (total > maxBytes) throw tooLarge(url, maxBytes);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, total);
}

const tooLarge = (url: URL, maxBytes: number): MessageBuildError =>
  new MessageBuildError(`Attachment ${url.href} is larger than the ${maxBytes} bytes the email may still hold.`, true);

/** Undici hides the socket error in `cause`; that is the part worth logging. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
