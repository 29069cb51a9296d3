import { randomBytes } from 'node:crypto';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import { writeHeaders, type MessageHeaders } from './header-writer';

/** What a message without attachments is made of; the headers are already filtered. */
export interface SimpleMessage extends MessageHeaders {
  html: string | null;
  text: string | null;
}

const LINE = 76;
const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * Writes an email without attachments (every batch email, most single ones) straight to bytes:
 * the headers every message gets (writeHeaders), then the same structure and encodings
 * nodemailer's MailComposer produces (quoted-printable bodies, multipart/alternative for html +
 * text), built from nodemailer's own encoders, without its stream pipeline, which cost five times
 * the work itself (0.9 ms per 10 KB email on the development machine; this takes about 0.1 ms).
 */
export function writeSimpleMessage(m: SimpleMessage): Buffer {
  const lines = writeHeaders(m);
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

export interface Part {
  headers: string[];
  body: string;
}

/** A text part: 7bit when it is short-lined ASCII, quoted-printable otherwise (as MailComposer chooses). */
export function part(type: string, content: string): Part {
  const body = content.replace(/\r?\n/g, '\r\n');
  const plain = body.split('\r\n').every((line) => line.length <= LINE && ASCII_PRINTABLE.test(line));
  if (plain) return { headers: [`Content-Type: ${type}; charset=utf-8`, 'Content-Transfer-Encoding: 7bit'], body };
  return {
    headers: [`Content-Type: ${type}; charset=utf-8`, 'Content-Transfer-Encoding: quoted-printable'],
    body: qpWrap(qpEncode(Buffer.from(body, 'utf8')), LINE),
  };
}
