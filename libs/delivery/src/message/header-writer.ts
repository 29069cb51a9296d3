import { domainToASCII } from 'node:url';
import { formatAddress, parseAddress } from '@herald/core';

/** The top-level fields of every message Herald writes; the custom headers are already filtered. */
export interface MessageHeaders {
  from: string;
  to: string[];
  cc: string[] | null;
  replyTo: string[] | null;
  subject: string;
  headers: { key: string; value: string }[];
  messageId: string;
  date: Date;
}

/** RFC 5322 §2.1.1: a line SHOULD be at most 78 characters and MUST be at most 998. */
const SOFT_LINE = 78;
const HARD_LINE = 998;
/** RFC 2047 §2: an encoded word is at most 75 characters, `=?UTF-8?Q?` and `?=` included. */
const ENCODED_OVERHEAD = '=?UTF-8?Q??='.length;
const ENCODED_TEXT_MAX = 75 - ENCODED_OVERHEAD;
/** Below this much room left on a line, an encoded run starts on the next one. */
const MIN_ENCODED_TEXT = 12;
/** Q-encoded text that every reader takes literally, in any header (RFC 2047 §5 (3)). */
const Q_LITERAL = /^[A-Za-z0-9!*+\-/]$/;

/**
 * The header fields From to MIME-Version, each folded so that no line passes 998 octets, and 78
 * wherever whitespace or encoding allows. The MIME structure fields (Content-*) follow them.
 */
export function writeHeaders(m: MessageHeaders): string[] {
  return [
    field('From', addressList([m.from])),
    ...(m.replyTo?.length ? [field('Reply-To', addressList(m.replyTo))] : []),
    field('To', addressList(m.to)),
    ...(m.cc?.length ? [field('Cc', addressList(m.cc))] : []),
    // unstructured: a word that cannot fit on a 78-character line is encoded, and so can be split
    field('Subject', m.subject, SOFT_LINE - 1),
    // A custom header may be structured (List-Unsubscribe's URLs), where an encoded word would
    // change its meaning: its ASCII words are encoded only when no line could hold them.
    ...m.headers.map((h) => field(h.key, h.value, HARD_LINE - h.key.length - 2)),
    field('Message-ID', m.messageId),
    field('Date', m.date.toUTCString().replace(/GMT$/, '+0000')),
    'MIME-Version: 1.0',
  ];
}

/**
 * `Name: value`, folded before whitespace (RFC 5322 §2.2.3). With `plainMax`, the value is
 * unstructured text whose words are RFC 2047 encoded words (UTF-8, Q) when they have to be:
 * non-ASCII or control characters, something a reader would take for an encoded word, or longer
 * than `plainMax`. Adjacent such words are encoded together with the spaces between them (a
 * reader drops whitespace between encoded words), split at character boundaries into words of
 * at most 75 characters, so a reader decodes the exact value back.
 */
export function field(name: string, value: string, plainMax?: number): string {
  const encoded = (word: string) => plainMax !== undefined && (word.length > plainMax || /[^\x21-\x7e]/.test(word) || word.includes('=?'));
  const words = [...value.replace(/\r\n|\r|\n/g, ' ').matchAll(/( *)([^ ]+)/g)].map((m) => ({ space: m[1], text: m[2] }));
  if (words.length === 0) return `${name}: `;
  const out = new FoldedLines(`${name}:`);
  for (let i = 0; i < words.length;) {
    const space = i === 0 ? ` ${words[0].space}` : words[i].space;
    if (!encoded(words[i].text)) {
      out.add(space, words[i].text);
      i++;
      continue;
    }
    let end = i + 1;
    while (end < words.length && encoded(words[end].text)) end++;
    const run = words
      .slice(i, end)
      .map((w, k) => (k === 0 ? w.text : w.space + w.text))
      .join('');
    // the first word takes what is left of the current line when that is worth it
    const room = SOFT_LINE - out.column - space.length - ENCODED_OVERHEAD;
    encodeWords(run, room).forEach((word, k) => out.add(k === 0 ? space : ' ', word));
    i = end;
  }
  return out.toString();
}

/** A field's lines: a word goes on the current line unless that would pass 78 characters. */
class FoldedLines {
  private readonly lines: string[] = [];
  private words = 0;

  constructor(private line: string) {}

  get column(): number {
    return this.line.length;
  }

  /** `space` is never empty after the first word, so a folded line starts with whitespace. */
  add(space: string, word: string): void {
    if (this.words > 0 && this.line.length + space.length + word.length > SOFT_LINE) {
      this.lines.push(this.line);
      this.line = space + word;
    } else {
      this.line += space + word;
    }
    this.words++;
  }

  toString(): string {
    return [...this.lines, this.line].join('\r\n');
  }
}

/** `text` as UTF-8 Q encoded words; the first one fits in `firstRoom` characters of encoded text when that is worth it. */
function encodeWords(text: string, firstRoom: number): string[] {
  const words: string[] = [];
  let room = firstRoom >= MIN_ENCODED_TEXT ? Math.min(firstRoom, ENCODED_TEXT_MAX) : ENCODED_TEXT_MAX;
  let current = '';
  // by code point, so no character is split between two words (RFC 2047 §5)
  for (const char of text) {
    const q = qEncode(char);
    if (current && current.length + q.length > room) {
      words.push(current);
      current = '';
      room = ENCODED_TEXT_MAX;
    }
    current += q;
  }
  if (current) words.push(current);
  return words.map((w) => `=?UTF-8?Q?${w}?=`);
}

function qEncode(char: string): string {
  if (char === ' ') return '_';
  if (Q_LITERAL.test(char)) return char;
  return [...Buffer.from(char, 'utf8')].map((byte) => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/**
 * Addresses as stored (`Name <a@b>` or bare), domains in ASCII. A display name is a phrase of
 * encoded words when it has non-ASCII characters or a word no line could fold around.
 */
function addressList(values: string[]): string {
  return values
    .map((value) => {
      const parsed = parseAddress(value);
      if (!parsed) return value;
      const at = parsed.address.lastIndexOf('@');
      const address = `${parsed.address.slice(0, at)}@${domainToASCII(parsed.address.slice(at + 1)) || parsed.address.slice(at + 1)}`;
      const display = parsed.display;
      if (display === null || (/^[\x20-\x7e]*$/.test(display) && !display.split(' ').some((w) => w.length > SOFT_LINE - 3 || w.includes('=?')))) {
        return formatAddress({ display, address });
      }
      return `${encodeWords(display, ENCODED_TEXT_MAX).join(' ')} <${address}>`;
    })
    .join(', ');
}
