import { parseAddressHeader, type AddressObject, type EmailAddress } from 'mailparser';
import { isValidAddrSpec } from '@herald/core';
import { fieldValue, type HeaderField } from './mime-headers';

/**
 * What the relay decides on, read from the header block alone: the body is never parsed (it is
 * stored and sent as the client wrote it; GET /emails derives its html and text on demand).
 */
export interface RelayHeaders {
  /** The one mailbox of the one From field; null when there is no From, several, or not exactly one valid mailbox. */
  from: Mailbox | null;
  to: Mailbox[];
  cc: Mailbox[];
  replyTo: Mailbox[];
  /** Decoded (RFC 2047), unfolded, '' when absent; several Subject fields: the first. */
  subject: string;
  /** The values of every Message-ID field, unfolded. */
  messageIds: string[];
  hasDate: boolean;
}

export interface Mailbox {
  name: string;
  address: string;
}

/** Reads the fields of `splitMessage`. Address fields given twice are read as one list, as mailparser did. */
export function relayHeaders(fields: HeaderField[]): RelayHeaders {
  const values = (name: string) => fields.filter((f) => f.name === name).map((f) => headerText(fieldValue(f)));
  const froms = values('from');
  const subject = values('subject');
  return {
    from: froms.length === 1 ? singleMailbox(parseAddressHeader(froms[0])) : null,
    to: mailboxes(values('to')),
    cc: mailboxes(values('cc')),
    replyTo: mailboxes(values('reply-to')),
    subject: subject.length ? decodeWords(subject[0]).replace(/[\r\n]+/g, ' ') : '',
    messageIds: fields.filter((f) => f.name === 'message-id').map(fieldValue),
    hasDate: fields.some((f) => f.name === 'date'),
  };
}

/**
 * A header value read as latin1 (one character per octet) as text: raw 8-bit bytes are UTF-8
 * when they form valid UTF-8 (what clients that send 8-bit headers write, RFC 6532), latin1 otherwise.
 */
export function headerText(latin1: string): string {
  if (!/[^\x00-\x7f]/.test(latin1)) return latin1;
  try {
    return UTF8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
}
const UTF8 = new TextDecoder('utf-8', { fatal: true });

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/**
 * Decodes the RFC 2047 encoded words of an unstructured value (Subject): whitespace between two
 * encoded words is dropped (§6.2), adjacent words of one charset are decoded together (a
 * character may be split across them), a word of an unknown charset is left as written.
 */
export function decodeWords(value: string): string {
  if (!value.includes('=?')) return value;
  const joined = value.replace(/(=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)/g, '$1');
  let out = '';
  let last = 0;
  let run: { charset: string; bytes: Buffer[]; text: string } | null = null;
  const flush = () => {
    if (run) out += decodeCharset(run.charset, Buffer.concat(run.bytes)) ?? run.text;
    run = null;
  };
  for (const m of joined.matchAll(ENCODED_WORD)) {
    if (m.index > last) {
      flush();
      out += joined.slice(last, m.index);
    }
    last = m.index + m[0].length;
    // RFC 2231 §5: a language may follow the charset (`utf-8*en`)
    const charset = m[1].split('*')[0].toLowerCase();
    const bytes = m[2] === 'B' || m[2] === 'b' ? Buffer.from(m[3], 'base64') : qDecode(m[3]);
    if (run && run.charset === charset) {
      run.bytes.push(bytes);
      run.text += m[0];
    } else {
      flush();
      run = { charset, bytes: [bytes], text: m[0] };
    }
  }
  flush();
  return out + joined.slice(last);
}

/** RFC 2047 §4.2: `_` is a space, `=XX` an octet. */
function qDecode(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '_') bytes.push(0x20);
    else if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

function decodeCharset(charset: string, bytes: Buffer): string | null {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return null;
  }
}

function flatten(value: AddressObject): EmailAddress[] {
  return value.value.flatMap((a) => (a.group ? a.group : [a]));
}

/** The valid mailboxes of an address field, or of several (group syntax flattened; invalid entries skipped). */
function mailboxes(values: string[]): Mailbox[] {
  if (!values.length) return [];
  return flatten(parseAddressHeader(values)).flatMap((a) => (a.address && isValidAddrSpec(a.address) ? [{ name: a.name, address: a.address }] : []));
}

function singleMailbox(value: AddressObject): Mailbox | null {
  const all = flatten(value);
  if (all.length !== 1 || !all[0].address || !isValidAddrSpec(all[0].address)) return null;
  return { name: all[0].name, address: all[0].address };
}
