/**
 * The header block of a MIME message as bytes: which fields it has, and the same message with
 * some fields removed or added, every other byte as the client sent it (folds, line endings,
 * order). Header bytes are read as latin1 so that any 8-bit byte survives a round trip.
 */

export interface HeaderField {
  /** Lowercase, e.g. `message-id`. */
  name: string;
  /** The whole field as sent, folds and its final line ending included. */
  raw: string;
}

export interface SplitMessage {
  fields: HeaderField[];
  /** The line ending the client used (of its first line): added fields use it too. */
  eol: '\r\n' | '\n';
  /** Everything after the header fields: the empty line and the body. */
  rest: Buffer;
}

export function splitMessage(message: Buffer): SplitMessage {
  const crlf = message.indexOf('\r\n\r\n');
  const lf = message.indexOf('\n\n');
  // The end of the last header line (its line ending included); the empty line follows it.
  let end: number;
  if (message[0] === 0x0a || (message[0] === 0x0d && message[1] === 0x0a)) end = 0;
  else if (crlf !== -1 && (lf === -1 || crlf + 1 <= lf)) end = crlf + 2;
  else if (lf !== -1) end = lf + 1;
  else end = message.length;
  const header = message.subarray(0, end).toString('latin1');
  const fields: HeaderField[] = [];
  for (const line of header.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
    const last = fields[fields.length - 1];
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      last.raw += line;
      continue;
    }
    const colon = line.indexOf(':');
    fields.push({ name: colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '', raw: line });
  }
  const firstEol = message.indexOf('\n');
  const eol = firstEol > 0 && message[firstEol - 1] === 0x0d ? '\r\n' : firstEol === -1 ? '\r\n' : '\n';
  return { fields, eol, rest: message.subarray(end) };
}

/** RFC 5322 §2.1.1: a line of a message MUST be at most 998 octets, its CRLF excluded. */
export const MAX_LINE_OCTETS = 998;

/** The first header field with a line over MAX_LINE_OCTETS, and that line's length, or null. */
export function overlongHeaderLine(fields: HeaderField[]): { field: HeaderField; octets: number } | null {
  for (const field of fields) {
    // latin1: one character per octet
    for (const line of field.raw.split('\n')) {
      const octets = line.endsWith('\r') ? line.length - 1 : line.length;
      if (octets > MAX_LINE_OCTETS) return { field, octets };
    }
  }
  return null;
}

/** The value of a field, unfolded, without its name and surrounding whitespace. */
export function fieldValue(field: HeaderField): string {
  return field.raw
    .slice(field.raw.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .trim();
}

/** The message without the `drop` fields and with `add` (lines without line ending) after the others. */
export function rewriteMessage(split: SplitMessage, drop: ReadonlySet<string>, add: string[] = []): Buffer {
  return Buffer.concat(rewriteParts(split, drop, add));
}

/** The same as its new header block and the rest of the message as received (not copied). */
export function rewriteParts(split: SplitMessage, drop: ReadonlySet<string>, add: string[] = []): [Buffer, Buffer] {
  const kept = split.fields.filter((f) => !drop.has(f.name)).map((f) => f.raw);
  // A last header line without a line ending (a message with no body) gets one before additions.
  if (add.length && kept.length && !kept[kept.length - 1].endsWith('\n')) kept[kept.length - 1] += split.eol;
  const head = kept.join('') + add.map((line) => `${line}${split.eol}`).join('');
  return [Buffer.from(head, 'latin1'), split.rest];
}

/** RFC 5322 date-time in UTC, e.g. `Thu, 26 Nov 2026 01:22:23 +0000`. */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}
