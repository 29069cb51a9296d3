import MailComposer from 'nodemailer/lib/mail-composer';
import { writeSimpleMessage } from './simple-message';
import type { MailComposerAttachment } from 'nodemailer/lib/mail-composer';
import type { AddressAllowList } from '@herald/core';
import { type AttachmentLookup, fetchAttachment } from './attachment-fetcher';
import { writeHeaders, type MessageHeaders } from './header-writer';
import { MessageBuildError } from './message-build-error';

/** One attachment row as stored: exactly one of `content` and `path` is set. */
export interface OutgoingAttachment {
  filename: string | null;
  contentType: string | null;
  /** Set for inline images referenced from the html as `cid:<contentId>`. */
  contentId: string | null;
  content: Buffer | null;
  /** An http(s) URL fetched at build time. */
  path: string | null;
}

/** The stored email, as the engine hands it over. Bcc is absent on purpose: it never reaches headers. */
export interface OutgoingEmail {
  id: string;
  /** As sent, e.g. `Acme <hi@acme.com>`. */
  from: string;
  to: string[];
  cc: string[] | null;
  replyTo: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  /** Stored with its angle brackets, e.g. `<uuid@acme.com>`; written as is. */
  messageId: string;
  date: Date;
  attachments: OutgoingAttachment[];
}

export interface BuildOptions {
  /** Deadline for each `path` attachment download. */
  fetchTimeoutMs?: number;
  /** Cap on all attachment bytes together, stored and fetched. */
  maxBytes?: number;
  /**
   * Private / loopback addresses `path` attachments may be fetched from anyway
   * (ATTACHMENT_ALLOWED_ADDRESSES, see addressAllowList); none when absent.
   */
  allowedAddresses?: AddressAllowList;
  /** How attachment hosts are resolved; node:dns lookup unless a test injects its own. */
  lookup?: AttachmentLookup;
}

const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
/** API.md §2.1: an email holds at most 40 MB. */
const DEFAULT_MAX_BYTES = 40 * 1024 * 1024;

/**
 * Headers a customer must not set: the ones Herald writes from the email's own fields, and the
 * trace and authentication headers only MTAs add. API validation refuses most of them already;
 * this is the last line for rows stored before a rule existed, so a header can never forge our
 * Return-Path, signature or identity.
 */
const FORBIDDEN_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'return-path',
  'received',
  'dkim-signature',
  'domainkey-signature',
  'authentication-results',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'received-spf',
  'delivered-to',
]);

/**
 * The email's RFC 5322 bytes, CRLF line endings, ready to sign. `path` attachments are
 * downloaded here, so a failing URL surfaces as a MessageBuildError the engine can act on
 * (bounce the email when permanent, retry later when not). nodemailer is told never to touch
 * files or URLs itself: everything it sees is already in memory.
 */
export async function buildMessage(email: OutgoingEmail, options: BuildOptions = {}): Promise<Buffer> {
  return (await buildMessages(email, [email.html], options))[0]!;
}

/**
 * The email once per html in `htmls` (open and click tracking give each recipient an html of
 * its own), every other part the same: `path` attachments are downloaded once for all of them.
 */
export async function buildMessages(email: OutgoingEmail, htmls: (string | null)[], options: BuildOptions = {}): Promise<Buffer[]> {
  const headers: MessageHeaders = { ...email, headers: customHeaders(email.headers) };
  // Without attachments (and with a body), the direct writer gives the same message at a fraction of the cost.
  if (!email.attachments.length && (email.html !== null || email.text !== null)) {
    return htmls.map((html) => writeSimpleMessage({ ...headers, html, text: email.text }));
  }
  const attachments = await resolveAttachments(email.attachments, options);
  // nodemailer builds the MIME tree; the top-level fields come from writeHeaders, as in every
  // message, since nodemailer folds only at spaces and leaves a long word on one line.
  const lines = writeHeaders(headers);
  return Promise.all(
    htmls.map(async (html) => {
      const composer = new MailComposer({
        html: html ?? undefined,
        text: email.text ?? undefined,
        attachments,
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      return withHeaders(crlf(await composer.compile().build()), lines);
    }),
  );
}

/** The composed message with its top-level fields replaced by `lines`, its Content-* fields kept. */
function withHeaders(composed: Buffer, lines: string[]): Buffer {
  const end = composed.indexOf('\r\n\r\n');
  const head = composed.subarray(0, end).toString('latin1');
  const content = head.split(/\r\n(?![ \t])/).filter((f) => /^content-/i.test(f));
  // writeHeaders' lines may hold UTF-8 (an SMTPUTF8 local part); nodemailer's fields are ASCII
  return Buffer.concat([
    Buffer.from(lines.join('\r\n'), 'utf8'),
    Buffer.from(content.map((f) => `\r\n${f}`).join(''), 'latin1'),
    composed.subarray(end),
  ]);
}

/**
 * SMTP wants CRLF everywhere; nodemailer leaves the customer's bare LFs. Its own `newline: 'win'`
 * stream transform does this at a quarter of the cost of building the whole message; one pass
 * over the bytes (latin1 keeps each byte one character) costs a few microseconds.
 */
function crlf(message: Buffer): Buffer {
  const text = message.toString('latin1');
  return text.includes('\n') ? Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1') : message;
}

/** The customer's headers minus the forbidden ones, in their order, names as given. */
function customHeaders(headers: Record<string, string> | null): { key: string; value: string }[] {
  return Object.entries(headers ?? {})
    .filter(([name]) => !FORBIDDEN_HEADERS.has(name.trim().toLowerCase()))
    .map(([key, value]) => ({ key, value }));
}

async function resolveAttachments(rows: OutgoingAttachment[], options: BuildOptions): Promise<MailComposerAttachment[]> {
  const timeoutMs = options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  let budget = maxBytes - rows.reduce((sum, row) => sum + (row.content?.length ?? 0), 0);
  if (budget < 0) throw new MessageBuildError(`The attachments are larger than ${maxBytes} bytes.`, true);
  const resolved: MailComposerAttachment[] = [];
  // One download at a time: each may take what the ones before it left of the budget.
  for (const row of rows) {
    let content = row.content;
    let contentType = row.contentType;
    if (!content) {
      if (!row.path) throw new MessageBuildError(`Attachment ${row.filename ?? '(unnamed)'} has neither content nor path.`, true);
      const fetched = await fetchAttachment(row.path, {
        timeoutMs,
        maxBytes: budget,
        allowed: options.allowedAddresses,
        lookup: options.lookup,
      });
      budget -= fetched.content.length;
      content = fetched.content;
      contentType ??= fetched.contentType;
    }
    resolved.push(toComposerAttachment(row, content, contentType));
  }
  return resolved;
}

/** An attachment with a content id goes inline into multipart/related beside the html. */
function toComposerAttachment(row: OutgoingAttachment, content: Buffer, contentType: string | null): MailComposerAttachment {
  return {
    content,
    filename: row.filename ?? (row.path ? filenameOf(row.path) : undefined),
    contentType: contentType ?? undefined,
    ...(row.contentId ? { cid: row.contentId, contentDisposition: 'inline' } : {}),
  };
}

/** The last path segment of a URL, so a fetched file keeps a recognisable name. */
function filenameOf(path: string): string | undefined {
  const segment = new URL(path).pathname.split('/').pop();
  if (!segment) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
