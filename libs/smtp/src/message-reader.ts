import type { MessageSpool } from './submission-port';

/** A message past this size (and past its header) goes on to a spool as it arrives, when the port offers one. */
export const SPOOL_AFTER_BYTES = 1024 * 1024;

export interface ReadMessage {
  /**
   * The message as received (dot-unstuffed), or its start when `spool` has the rest; null once
   * it grew past the cap.
   */
  raw: Buffer | null;
  /** Where the rest of a large message went; the caller discards it unless the message is accepted. */
  spool: MessageSpool | null;
  /** The first line-ending violation: a CR not followed by LF, or an LF not preceded by CR. */
  bare: 'CR' | 'LF' | null;
}

export interface ReadOptions {
  /** Called once the message holds its whole header and `spoolAfterBytes`: the rest goes there. */
  openSpool?: (head: Buffer) => MessageSpool;
  spoolAfterBytes?: number;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Reads a DATA stream to its end (the rest is drained, not kept, once it is over the cap or
 * refused) and finds bare CR / LF across chunk boundaries. A message that grows past
 * `spoolAfterBytes` with its header complete is held no further: its start is kept, the rest is
 * written to the spool as it arrives, the stream paused while the spool is busy.
 */
export async function readMessage(stream: AsyncIterable<Buffer>, maxBytes: number, options: ReadOptions = {}): Promise<ReadMessage> {
  const spoolAfter = options.spoolAfterBytes ?? SPOOL_AFTER_BYTES;
  let chunks: Buffer[] = [];
  let held = 0;
  let total = 0;
  let bare: 'CR' | 'LF' | null = null;
  let endsWithCr = false;
  // the last bytes seen while the header has not ended (a message starting with CRLF has no header); null after
  let headerTail: Buffer | null = CRLF;
  let head: Buffer | null = null;
  let spool: MessageSpool | null = null;
  try {
    for await (const chunk of stream) {
      total += chunk.length;
      if (bare === null) bare = findBare(chunk, endsWithCr);
      if (chunk.length > 0) endsWithCr = chunk[chunk.length - 1] === 0x0d;
      if (total > maxBytes || bare !== null) {
        chunks = [];
        head = null;
        continue;
      }
      if (spool) {
        await spool.write(chunk);
        continue;
      }
      chunks.push(chunk);
      held += chunk.length;
      if (headerTail) headerTail = headerEnded(headerTail, chunk) ? null : lastBytes(headerTail, chunk);
      if (options.openSpool && !headerTail && held >= spoolAfter) {
        head = Buffer.concat(chunks, held);
        chunks = [];
        spool = options.openSpool(head);
      }
    }
  } catch (error) {
    await spool?.discard();
    throw error;
  }
  if (bare === null && endsWithCr) bare = 'CR';
  const raw = total > maxBytes ? null : (head ?? Buffer.concat(chunks, bare === null ? total : undefined));
  return { raw, spool, bare };
}

function headerEnded(tail: Buffer, chunk: Buffer): boolean {
  if (chunk.indexOf(HEADER_END) !== -1) return true;
  return Buffer.concat([tail, chunk.subarray(0, 3)]).indexOf(HEADER_END) !== -1;
}

/** The last three bytes of what was seen (enough to find CRLF CRLF across the next chunk's start). */
function lastBytes(tail: Buffer, chunk: Buffer): Buffer {
  return chunk.length >= 3 ? Buffer.from(chunk.subarray(chunk.length - 3)) : Buffer.concat([tail, chunk]).subarray(-3);
}

/** The first bare CR or LF of a chunk; `afterCr` says the previous chunk ended with CR. */
export function findBare(chunk: Buffer, afterCr: boolean): 'CR' | 'LF' | null {
  if (chunk.length === 0) return null;
  if (afterCr && chunk[0] !== 0x0a) return 'CR';
  for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) {
    if (i === 0 ? !afterCr : chunk[i - 1] !== 0x0d) return 'LF';
  }
  for (let i = chunk.indexOf(0x0d); i !== -1 && i < chunk.length - 1; i = chunk.indexOf(0x0d, i + 1)) {
    if (chunk[i + 1] !== 0x0a) return 'CR';
  }
  return null;
}
