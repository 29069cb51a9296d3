import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { encodeWords, isPlainText } from 'nodemailer/lib/mime-funcs';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import { formatAddress, parseAddress } from '@herald/core';

/** What a message without attachments is made of; the headers are already filtered. */
export interface SimpleMessage {
  from: string;
  to: string[];
  cc: string[] | null;
  replyTo: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: { key: string; value: string }[];
  messageId: string;
  date: Date;
}

const LINE = 76;
const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * Writes an email without attachments (every batch email, most single ones) straight to bytes:
 * the same structure and encodings nodemailer's MailComposer produces (RFC 2047 words for
 * non-ASCII headers, quoted-printable bodies, multipart/alternative for html + text), built from
 * nodemailer's own encoders, without its stream pipeline, which cost five times the work itself
 * (0.9 ms per 10 KB email on the development machine; this takes about 0.1 ms).
 */
export function writeSimpleMessage(m: SimpleMessage): Buffer {
  const lines = [
    header('From', addressList([m.from])),
    ...(m.replyTo?.length ? [header('Reply-To', addressList(m.replyTo))] : []),
    header('To', addressList(m.to)),
    ...(m.cc?.length ? [header('Cc', addressList(m.cc))] : []),
    header('Subject', words(m.subject)),
    ...m.headers.map((h) => header(h.key, words(h.value))),
    header('Message-ID', m.messageId),
    header('Date', m.date.toUTCString().replace(/GMT$/, '+0000')),
    'MIME-Version: 1.0',
  ];
  const parts = [m.text === null ? null : part('text/plain', m.text), m.html === null ? null : part('text/html', m.html)].filter(
    (p): p is Part => p !== null,
  );
  if (parts.length === 1) {
    const [only] = parts;
    // The body keeps its own final line break, and gets one if it has none.
    lines.push(...only.headers, '', only.body.endsWith('\r\n') ? only.body.slice(0, -2) : only.body, '');
  } else {
    const boundary = `--_herald_alt_${randomBytes(12).toString('hex')}`;
    lines.push(`Content-Type: multipart/alternative;\r\n boundary="${boundary}"`, '');
    for (const p of parts) lines.push(`--${boundary}`, ...p.headers, '', p.body);
    lines.push(`--${boundary}--`, '');
  }
  return Buffer.from(lines.join('\r\n'), 'utf8');
}

interface Part {
  headers: string[];
  body: string;
}

/** A text part: 7bit when it is short-lined ASCII, quoted-printable otherwise (as MailComposer chooses). */
function part(type: string, content: string): Part {
  const body = content.replace(/\r?\n/g, '\r\n');
  const plain = body.split('\r\n').every((line) => line.length <= LINE && ASCII_PRINTABLE.test(line));
  if (plain) return { headers: [`Content-Type: ${type}; charset=utf-8`, 'Content-Transfer-Encoding: 7bit'], body };
  return {
    headers: [`Content-Type: ${type}; charset=utf-8`, 'Content-Transfer-Encoding: quoted-printable'],
    body: qpWrap(qpEncode(Buffer.from(body, 'utf8')), LINE),
  };
}

/** Addresses as stored (`Name <a@b>` or bare), display names encoded when not ASCII, domains in ASCII. */
function addressList(values: string[]): string {
  return values
    .map((value) => {
      const parsed = parseAddress(value);
      if (!parsed) return value;
      const at = parsed.address.lastIndexOf('@');
      const address = `${parsed.address.slice(0, at)}@${domainToASCII(parsed.address.slice(at + 1)) || parsed.address.slice(at + 1)}`;
      if (parsed.display === null || isPlainText(parsed.display)) return formatAddress({ display: parsed.display, address });
      return `${encodeWords(parsed.display, 'Q', 52)} <${address}>`;
    })
    .join(', ');
}

const words = (value: string): string => (ASCII_PRINTABLE.test(value) ? value : encodeWords(value, 'Q', 52));

/** `Name: value`, folded before spaces so no line passes 76 characters where it can be helped (RFC 5322 §2.2.3). */
function header(name: string, value: string): string {
  const full = `${name}: ${value.replace(/\r?\n/g, ' ')}`;
  if (full.length <= LINE) return full;
  const out: string[] = [];
  let line = '';
  for (const word of full.split(' ')) {
    if (line && line.length + 1 + word.length > LINE) {
      out.push(line);
      line = ` ${word}`;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  out.push(line);
  return out.join('\r\n');
}
