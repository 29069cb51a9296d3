/**
 * Just enough MIME to take a report apart: headers, Content-Type parameters, multipart bodies
 * and transfer encodings. mailparser flattens an attached message/rfc822 into its parent, which
 * loses exactly the embedded headers a report parser needs, hence this small reader.
 */

export interface HeaderField {
  /** Lowercased. */
  name: string;
  /** Unfolded and trimmed. */
  value: string;
}

export interface MimePart {
  headers: HeaderField[];
  /** Lowercased `type/subtype`; `text/plain` when absent (RFC 2045 §5.2). */
  contentType: string;
  params: Record<string, string>;
  /** Transfer-decoded. */
  body: Buffer;
}

/** Nested multiparts deeper than this are not followed: no report nests that far. */
const MAX_DEPTH = 8;

/** Header-like fields from text (a MIME header or a delivery-status block), continuation lines unfolded. */
export function parseFields(text: string): HeaderField[] {
  const fields: HeaderField[] = [];
  for (const line of text.split(/\r?\n/)) {
    const last = fields.at(-1);
    if (/^[ \t]/.test(line) && last) {
      last.value = `${last.value} ${line.trim()}`.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0) fields.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() });
  }
  return fields;
}

export const field = (fields: HeaderField[], name: string): string | null => fields.find((f) => f.name === name)?.value ?? null;

/** Splits raw bytes into header fields and body at the first empty line. */
export function parsePart(raw: Buffer): MimePart {
  const text = raw.toString('latin1');
  const match = /\r?\n\r?\n/.exec(text);
  const headerText = match ? text.slice(0, match.index) : text;
  const bodyStart = match ? match.index + match[0].length : raw.length;
  const headers = parseFields(headerText);
  const { type, params } = parseContentType(field(headers, 'content-type'));
  const encoding = (field(headers, 'content-transfer-encoding') ?? '').toLowerCase();
  return { headers, contentType: type, params, body: decodeBody(raw.subarray(bodyStart), encoding) };
}

/** `multipart/report; report-type=delivery-status; boundary="x"` → type and lowercased-key params. */
export function parseContentType(value: string | null): { type: string; params: Record<string, string> } {
  if (!value) return { type: 'text/plain', params: {} };
  const [type, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const match of rest.join(';').matchAll(/([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g)) {
    params[match[1].toLowerCase()] = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3];
  }
  return { type: type.trim().toLowerCase(), params };
}

/** The direct children of a multipart part; empty for anything else. */
export function childrenOf(part: MimePart): MimePart[] {
  const boundary = part.params.boundary;
  if (!part.contentType.startsWith('multipart/') || !boundary) return [];
  const text = part.body.toString('latin1');
  const delimiter = `--${boundary}`;
  const children: MimePart[] = [];
  const lines = text.split(/\r?\n/);
  let current: string[] | null = null;
  for (const line of lines) {
    const trimmed = line.trimEnd();
    if (trimmed === delimiter || trimmed === `${delimiter}--`) {
      if (current) children.push(parsePart(Buffer.from(current.join('\r\n'), 'latin1')));
      current = trimmed === delimiter ? [] : null;
      if (!current) break;
      continue;
    }
    current?.push(line);
  }
  // A truncated report (no closing delimiter) still yields the parts it has.
  if (current) children.push(parsePart(Buffer.from(current.join('\r\n'), 'latin1')));
  return children;
}

/** Depth-first search for the first part matching `predicate`, the root included. */
export function findPart(root: MimePart, predicate: (part: MimePart) => boolean, depth = 0): MimePart | null {
  if (predicate(root)) return root;
  if (depth >= MAX_DEPTH) return null;
  for (const child of childrenOf(root)) {
    const found = findPart(child, predicate, depth + 1);
    if (found) return found;
  }
  return null;
}

/** A body's bytes under its Content-Transfer-Encoding (base64, quoted-printable; others as they are). */
export function decodeBody(body: Buffer, encoding: string): Buffer {
  if (encoding === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (encoding === 'quoted-printable') {
    const text = body
      .toString('latin1')
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(text, 'latin1');
  }
  return body;
}
