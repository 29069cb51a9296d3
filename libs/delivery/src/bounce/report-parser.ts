import addressparser from 'nodemailer/lib/addressparser';
import { classifyRefusal, parseSmtpReply } from '../bounce-classification';
import type { Bounce } from '../delivery.types';
import { field, findPart, parseFields, parsePart, type HeaderField, type MimePart } from './mime-parts';

/** One per-recipient block of an RFC 3464 delivery status notification. */
export interface DsnRecipient {
  /** Bare, lowercased: the Original-Recipient when given (the address Herald sent to), else the Final-Recipient. */
  recipient: string;
  /** `failed`, `delayed`, `delivered`, `relayed` or `expanded`, lowercased. */
  action: string;
  /** RFC 3463 status, e.g. `5.1.1`. */
  status: string;
  /** The remote server's reply without the `smtp;` type, e.g. `550 5.1.1 user unknown`. */
  diagnostic: string | null;
  /** Host name without the `dns;` type. */
  remoteMta: string | null;
}

export type ParsedReport =
  | { kind: 'dsn'; recipients: DsnRecipient[]; originalMessageId: string | null }
  | {
      kind: 'complaint';
      /** `abuse`, `fraud`, `virus`, `other`, ... lowercased. */
      feedbackType: string;
      /** Original-Rcpt-To, bare and lowercased; many feedback loops redact it. */
      recipient: string | null;
      /** Original-Mail-From, bare and lowercased: our VERP address when the sender kept it. */
      originalMailFrom: string | null;
      originalMessageId: string | null;
      /** The embedded original's To, bare and lowercased. */
      originalTo: string[];
    };

/**
 * Reads a bounce (RFC 3464 DSN) or a complaint (RFC 5965 ARF) out of a received message. Null
 * when the message is no such report: auto-replies and other mail sent to a Return-Path. Never
 * throws on malformed input; a report it cannot make sense of is null as well.
 */
export function parseReport(raw: Buffer): Promise<ParsedReport | null> {
  try {
    return Promise.resolve(readReport(parsePart(raw)));
  } catch {
    return Promise.resolve(null);
  }
}

function readReport(root: MimePart): ParsedReport | null {
  const report = findPart(root, (part) => part.contentType === 'multipart/report');
  if (!report) return null;
  const reportType = (report.params['report-type'] ?? '').toLowerCase();
  const original = findPart(report, (part) => part !== report && /^(message\/rfc822|text\/rfc822-headers|message\/global)$/.test(part.contentType));
  const originalHeaders = original ? embeddedHeaders(original) : [];
  const originalMessageId = field(originalHeaders, 'message-id');

  if (reportType === 'delivery-status') {
    const status = findPart(
      report,
      (part) => part.contentType === 'message/delivery-status' || part.contentType === 'message/global-delivery-status',
    );
    if (!status) return null;
    return { kind: 'dsn', recipients: dsnRecipients(status.body.toString('utf8')), originalMessageId };
  }
  if (reportType === 'feedback-report') {
    const feedback = findPart(report, (part) => part.contentType === 'message/feedback-report');
    if (!feedback) return null;
    const fields = parseFields(feedback.body.toString('utf8'));
    return {
      kind: 'complaint',
      feedbackType: (field(fields, 'feedback-type') ?? 'other').toLowerCase(),
      recipient: bareAddress(field(fields, 'original-rcpt-to')),
      originalMailFrom: bareAddress(field(fields, 'original-mail-from')),
      originalMessageId,
      originalTo: addresses(field(originalHeaders, 'to')),
    };
  }
  return null;
}

/** A message/rfc822 part holds a whole message; text/rfc822-headers only its header. */
function embeddedHeaders(part: MimePart): HeaderField[] {
  return part.contentType === 'text/rfc822-headers' ? parseFields(part.body.toString('utf8')) : parsePart(part.body).headers;
}

/** The blocks after the first (per-message) one that name a recipient. */
function dsnRecipients(body: string): DsnRecipient[] {
  return body
    .split(/\r?\n(?:[ \t]*\r?\n)+/)
    .map(parseFields)
    .filter((fields) => field(fields, 'final-recipient') !== null || field(fields, 'original-recipient') !== null)
    .map((fields) => ({
      recipient: bareAddress(field(fields, 'original-recipient') ?? field(fields, 'final-recipient')) ?? '',
      action: (field(fields, 'action') ?? '').toLowerCase(),
      status: stripType(field(fields, 'status')) ?? '',
      diagnostic: stripType(field(fields, 'diagnostic-code')),
      remoteMta: stripType(field(fields, 'remote-mta')),
    }))
    .filter((recipient) => recipient.recipient !== '');
}

/** `rfc822; <User@Example.com>` → `user@example.com`. */
function bareAddress(value: string | null): string | null {
  const stripped = stripType(value);
  if (!stripped) return null;
  return stripped.replace(/^<|>$/g, '').trim().toLowerCase() || null;
}

/** Drops an RFC 3464 type prefix (`rfc822;`, `smtp;`, `dns;`), present or not. */
function stripType(value: string | null): string | null {
  if (value === null) return null;
  const stripped = value.replace(/^[A-Za-z0-9-]+\s*;\s*/, '').trim();
  return stripped || null;
}

function addresses(value: string | null): string[] {
  if (!value) return [];
  return addressparser(value, { flatten: true })
    .map((entry) => entry.address?.toLowerCase() ?? '')
    .filter((address) => address !== '');
}

/**
 * The bounce a DSN recipient block stands for, or null unless its action is `failed`. The Status
 * field is the reporting MTA's verdict and wins over the code in the diagnostic, except when it
 * is a generic `x.0.0` and the diagnostic is more specific.
 */
export function bounceOfDsnRecipient(r: DsnRecipient): Bounce | null {
  if (r.action !== 'failed') return null;
  const reply = parseSmtpReply(r.diagnostic ?? '');
  const status = /^[245]\.\d{1,3}\.\d{1,3}$/.test(r.status) ? r.status : null;
  const enhanced = status && !(/\.0\.0$/.test(status) && reply.enhanced) ? status : reply.enhanced;
  const code = reply.code ?? (enhanced?.startsWith('4') ? 450 : enhanced?.startsWith('5') ? 550 : null);
  return classifyRefusal([code, enhanced, reply.text].filter((part) => part !== null && part !== '').join(' '));
}
