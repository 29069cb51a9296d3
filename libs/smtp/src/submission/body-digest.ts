import { createHash, type Hash } from 'node:crypto';

/**
 * A SHA-256 of a message body, fed in chunks (lines may cross them), in which the MIME boundaries
 * do not count: a client that composes the same message again (nodemailer does on a retry) writes
 * new random boundaries, and that must still be "the same message" for idempotency. Every
 * boundary named by a `boundary=` parameter (the top-level one given up front, nested ones as
 * their part headers go by) is hashed as its ordinal number, in its parameter and in its
 * delimiter lines. Every other byte counts, so the decoded content, the part headers and the
 * attachments do too, without decoding anything.
 */
export class BodyDigest {
  private readonly hash: Hash = createHash('sha256');
  private readonly boundaries: string[] = [];
  /** The start of a line that has not ended yet (a chunk ended inside it). */
  private partial: Buffer | null = null;

  constructor(topBoundary: string | null) {
    if (topBoundary) this.boundaries.push(topBoundary);
  }

  update(chunk: Buffer): this {
    let start = 0;
    if (this.partial) {
      const nl = chunk.indexOf(0x0a);
      if (nl === -1) {
        this.partial = Buffer.concat([this.partial, chunk]);
        return this;
      }
      this.line(Buffer.concat([this.partial, chunk.subarray(0, nl + 1)]));
      this.partial = null;
      start = nl + 1;
    }
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.line(chunk.subarray(start, nl + 1));
      start = nl + 1;
    }
    if (start < chunk.length) this.partial = Buffer.from(chunk.subarray(start));
    return this;
  }

  digest(): Buffer {
    if (this.partial) this.line(this.partial);
    this.partial = null;
    return this.hash.digest();
  }

  private line(line: Buffer): void {
    // `--` starts a delimiter line; `b`/`B` may start a boundary parameter (folded onto its own line).
    if (line.length > 2 && line[0] === 0x2d && line[1] === 0x2d && this.boundaries.length) {
      const text = line.toString('latin1').trimEnd();
      const i = this.boundaries.findIndex((b) => text === `--${b}` || text === `--${b}--`);
      if (i !== -1) {
        this.hash.update(`--#${i}${text.endsWith(`${this.boundaries[i]}--`) ? '--' : ''}\n`);
        return;
      }
    }
    if (line.length < 1000 && hasBoundaryParameter(line)) {
      const text = line.toString('latin1');
      this.hash.update(
        text.replace(
          BOUNDARY_PARAMETER,
          (_, quoted: string | undefined, bare: string | undefined) => `boundary=#${this.ordinal(quoted ?? bare ?? '')}`,
        ),
        'latin1',
      );
      return;
    }
    this.hash.update(line);
  }

  private ordinal(boundary: string): number {
    const known = this.boundaries.indexOf(boundary);
    return known !== -1 ? known : this.boundaries.push(boundary) - 1;
  }
}

const BOUNDARY_PARAMETER = /boundary\s*=\s*(?:"([^"]*)"|([^\s;]+))/gi;

/** A cheap test before the regular expression: the line holds `boundary` in any case. */
function hasBoundaryParameter(line: Buffer): boolean {
  return line.indexOf('oundary') !== -1 || line.indexOf('OUNDARY') !== -1;
}

/** The `boundary` parameter of a Content-Type value, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^\s*multipart\//i.test(contentType)) return null;
  BOUNDARY_PARAMETER.lastIndex = 0;
  const m = BOUNDARY_PARAMETER.exec(contentType);
  BOUNDARY_PARAMETER.lastIndex = 0;
  return m ? (m[1] ?? m[2] ?? null) : null;
}
