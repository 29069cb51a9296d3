import type { FastifyInstance } from 'fastify';
import { HeraldError } from '@herald/core';
import { bodyTooLarge } from '@herald/http';
import type { FormPart, StreamedForm } from '@herald/contacts';

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
const DASHES = Buffer.from('--');
/** A part's headers are a few lines; more than this is no form a client sends. */
const MAX_HEADER_BYTES = 16 * 1024;

const malformed = () => new HeraldError('validation_error', 'The multipart/form-data body cannot be read (a boundary or a part is malformed).');

/**
 * multipart/form-data bodies (POST /contacts/imports: the SDK sends the CSV as FormData), read as
 * they arrive: the route gets a StreamedForm whose parts it reads in order, a file part's bytes
 * as they come off the socket, so an upload of any size is never held whole. The body limit
 * (API_BODY_LIMIT_BYTES) is checked on Content-Length first and counted as the bytes arrive.
 * Whatever the route leaves unread (it stopped on an error) is read and dropped, so the client
 * gets the answer rather than a reset connection.
 */
export function installMultipartParser(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    const limit = request.routeOptions.bodyLimit ?? fastify.initialConfig.bodyLimit ?? Infinity;
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > limit) return done(bodyTooLarge(limit), undefined);
    const boundary = boundaryOf(request.headers['content-type'] ?? '');
    if (!boundary) return done(malformed(), undefined);
    done(null, multipartForm(payload, boundary, limit));
  });
}

function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

export function multipartForm(source: AsyncIterable<Buffer>, boundary: string, limit: number): StreamedForm {
  return {
    streamed: true,
    async *parts(): AsyncGenerator<FormPart> {
      const reader = new ByteReader(source[Symbol.asyncIterator](), limit);
      try {
        yield* readParts(reader, boundary);
      } finally {
        await reader.drain();
      }
    },
  };
}

async function* readParts(reader: ByteReader, boundary: string): AsyncGenerator<FormPart> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first boundary may open the body (no preamble, no CRLF before it).
  reader.unshift(CRLF);
  await reader.skipThrough(delimiter, MAX_HEADER_BYTES);
  for (;;) {
    const after = await reader.take(2);
    if (after.equals(DASHES)) return;
    if (!after.equals(CRLF)) throw malformed();
    const headers = (await reader.readUntil(HEADERS_END, MAX_HEADER_BYTES)).toString('utf8');
    const disposition = /^content-disposition:\s*form-data(.*)$/im.exec(headers);
    const name = disposition ? param(disposition[1]!, 'name') : null;
    if (name === null) throw malformed();
    const body = reader.streamUntil(delimiter);
    yield { name, filename: param(disposition![1]!, 'filename'), body };
    // Whatever the route did not read of the part.
    for await (const _ of body);
  }
}

function param(params: string, key: string): string | null {
  const match = new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(params) ?? new RegExp(`;\\s*${key}=([^;\\s]+)`, 'i').exec(params);
  return match ? match[1]!.replace(/\\(.)/g, '$1') : null;
}

/** The body's bytes, pulled as needed, counted against the body limit. */
class ByteReader {
  private buffer: Buffer = Buffer.alloc(0);
  private total = 0;
  private ended = false;

  constructor(
    private readonly source: AsyncIterator<Buffer>,
    private readonly limit: number,
  ) {}

  unshift(bytes: Buffer): void {
    this.buffer = Buffer.concat([bytes, this.buffer]);
  }

  async take(n: number): Promise<Buffer> {
    while (this.buffer.length < n) if (!(await this.fill())) throw malformed();
    const taken = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return taken;
  }

  /** The bytes before `marker` (at most `max`), the marker consumed. */
  async readUntil(marker: Buffer, max: number): Promise<Buffer> {
    for (;;) {
      const at = this.buffer.indexOf(marker);
      if (at >= 0) {
        const before = this.buffer.subarray(0, at);
        this.buffer = this.buffer.subarray(at + marker.length);
        return before;
      }
      if (this.buffer.length > max + marker.length || !(await this.fill())) throw malformed();
    }
  }

  async skipThrough(marker: Buffer, max: number): Promise<void> {
    await this.readUntil(marker, max);
  }

  /** The bytes before `marker`, as they arrive (all but the last few, which may begin the marker); the marker consumed. */
  async *streamUntil(marker: Buffer): AsyncGenerator<Buffer> {
    for (;;) {
      const at = this.buffer.indexOf(marker);
      if (at >= 0) {
        const before = this.buffer.subarray(0, at);
        this.buffer = this.buffer.subarray(at + marker.length);
        if (before.length) yield before;
        return;
      }
      const keep = marker.length - 1;
      if (this.buffer.length > keep) {
        const out = this.buffer.subarray(0, this.buffer.length - keep);
        this.buffer = this.buffer.subarray(this.buffer.length - keep);
        yield out;
      }
      if (!(await this.fill())) throw malformed();
    }
  }

  /** Reads the rest of the body and drops it (within the limit; past it the connection is the server's to drop). */
  async drain(): Promise<void> {
    this.buffer = Buffer.alloc(0);
    try {
      while (await this.fill()) this.buffer = Buffer.alloc(0);
    } catch {
      // Over the limit, or the client went away: nothing more to read.
    }
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    let next: IteratorResult<Buffer>;
    try {
      next = await this.source.next();
    } catch (error) {
      // The client went away (or the stream broke): nothing more will come, and asking again would wait forever.
      this.ended = true;
      throw error;
    }
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.total += next.value.length;
    if (this.total > this.limit) {
      this.ended = true;
      throw bodyTooLarge(this.limit);
    }
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, next.value]) : next.value;
    return true;
  }
}
