export interface ReadMessage {
  /** The message as received (dot-unstuffed), or null once it grew past the cap. */
  raw: Buffer | null;
  /** The first line-ending violation: a CR not followed by LF, or an LF not preceded by CR. */
  bare: 'CR' | 'LF' | null;
}

/**
 * Reads a DATA stream to its end (the rest is drained, not kept, once it is over the cap or
 * refused) and finds bare CR / LF across chunk boundaries.
 */
export async function readMessage(stream: AsyncIterable<Buffer>, maxBytes: number): Promise<ReadMessage> {
  const chunks: Buffer[] = [];
  let total = 0;
  let bare: 'CR' | 'LF' | null = null;
  let endsWithCr = false;
  for await (const chunk of stream) {
    total += chunk.length;
    if (bare === null) bare = findBare(chunk, endsWithCr);
    if (chunk.length > 0) endsWithCr = chunk[chunk.length - 1] === 0x0d;
    if (total <= maxBytes && bare === null) chunks.push(chunk);
  }
  if (bare === null && endsWithCr) bare = 'CR';
  return { raw: total > maxBytes ? null : Buffer.concat(chunks, bare === null ? total : undefined), bare };
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
