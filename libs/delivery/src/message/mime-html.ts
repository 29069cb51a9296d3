import { decodeBody, field, parseContentType, parseFields } from '../bounce/mime-parts';
import { part } from './simple-message';

/** The html part of a message as submitted (SMTP relay), and how to put another html in its place. */
export interface MimeHtml {
  html: string;
  /** The message's top-level fields (List-Unsubscribe among them), as `name: value`. */
  headers: Record<string, string>;
  /** The whole message with this html instead, as UTF-8 quoted-printable; every other byte kept. */
  replace(html: string): Buffer;
}

const MAX_DEPTH = 8;
const CHARSETS: Record<string, BufferEncoding> = { 'utf-8': 'utf8', utf8: 'utf8', 'us-ascii': 'utf8', 'iso-8859-1': 'latin1', latin1: 'latin1' };

interface Located {
  headerStart: number;
  headerEnd: number;
  bodyStart: number;
  bodyEnd: number;
}

/**
 * Finds the first html body of a relayed message (not an attachment), in a single-part message
 * or anywhere in its multipart tree, so tracking can rewrite it as it does an API email's html.
 * Null when there is none, or its charset is one Herald does not re-encode (the message is then
 * sent untracked, as submitted). `mime` has CRLF line endings.
 */
export function mimeHtml(mime: Buffer): MimeHtml | null {
  const raw = mime.toString('latin1');
  const located = locate(raw, 0, raw.length, 0);
  if (!located) return null;
  const headerText = raw.slice(located.headerStart, located.headerEnd);
  const fields = parseFields(headerText);
  const { params } = parseContentType(field(fields, 'content-type'));
  const encoding = CHARSETS[(params.charset ?? 'us-ascii').toLowerCase()];
  if (!encoding) return null;
  const body = Buffer.from(raw.slice(located.bodyStart, located.bodyEnd), 'latin1');
  const html = decodeBody(body, (field(fields, 'content-transfer-encoding') ?? '').toLowerCase()).toString(encoding);
  const topEnd = raw.indexOf('\r\n\r\n');
  const headers = Object.fromEntries(parseFields(raw.slice(0, topEnd === -1 ? raw.length : topEnd)).map((f) => [f.name, f.value]));
  // The part's own fields but its Content-Type and Content-Transfer-Encoding, which the new body sets.
  const kept = headerText.split(/\r\n(?![ \t])/).filter((f) => !/^content-(type|transfer-encoding)\s*:/i.test(f) && f.length);
  return {
    html,
    headers,
    replace(next: string): Buffer {
      const encoded = part('text/html', next);
      const head = [...kept, ...encoded.headers].join('\r\n');
      const bodyText = encoded.body.endsWith('\r\n') && located.bodyEnd < raw.length ? encoded.body.slice(0, -2) : encoded.body;
      return Buffer.concat([
        Buffer.from(raw.slice(0, located.headerStart), 'latin1'),
        Buffer.from(head, 'latin1'),
        Buffer.from('\r\n\r\n', 'latin1'),
        Buffer.from(bodyText, 'latin1'),
        Buffer.from(raw.slice(located.bodyEnd), 'latin1'),
      ]);
    },
  };
}

/** The html part within raw[start, end): its header block and body offsets. */
function locate(raw: string, start: number, end: number, depth: number): Located | null {
  if (raw.startsWith('\r\n', start)) return null; // no header fields: text/plain
  const separator = raw.indexOf('\r\n\r\n', start);
  if (separator === -1 || separator >= end) return null;
  const fields = parseFields(raw.slice(start, separator));
  const { type, params } = parseContentType(field(fields, 'content-type'));
  const attachment = /^\s*attachment/i.test(field(fields, 'content-disposition') ?? '');
  if (type === 'text/html' && !attachment) return { headerStart: start, headerEnd: separator, bodyStart: separator + 4, bodyEnd: end };
  const boundary = params.boundary;
  if (!type.startsWith('multipart/') || !boundary || depth >= MAX_DEPTH) return null;
  const delimiter = `\r\n--${boundary}`;
  const bodyStart = separator + 4;
  // The CRLF before a delimiter belongs to it (RFC 2046 §5.1.1); the first may open the body.
  let at = raw.startsWith(`--${boundary}`, bodyStart) ? bodyStart - 2 : raw.indexOf(delimiter, bodyStart);
  while (at !== -1 && at < end) {
    const after = at + delimiter.length;
    if (raw.startsWith('--', after)) return null;
    const lineEnd = raw.indexOf('\r\n', after);
    if (lineEnd === -1 || lineEnd >= end) return null;
    const next = raw.indexOf(delimiter, lineEnd + 2);
    if (next === -1 || next > end) return null;
    const found = locate(raw, lineEnd + 2, next, depth + 1);
    if (found) return found;
    at = next;
  }
  return null;
}
