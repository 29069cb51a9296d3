import { addressDomain, parseAddress } from '@herald/core';
import type { NewEmail } from '@herald/messages';
import type { Broadcast } from './broadcast.types';
import { compileTemplate, escapeHtml, renderTemplate, type CompiledTemplate, type MergeValues } from './merge-tags';
import type { UnsubscribeKeys } from './unsubscribe-token';

/** One recipient, as the fan-out reads a segment member. */
export interface Recipient {
  contactId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  /** Every property of the team, fallbacks applied already (null: no value and no fallback). */
  properties: Record<string, string | number | null>;
}

/** A broadcast compiled once for its fan-out: templates split, sender and links resolved. */
export interface PreparedBroadcast {
  broadcast: Broadcast;
  region: string;
  fromDomain: string;
  replyTo: string[];
  subject: CompiledTemplate;
  html: CompiledTemplate | null;
  text: CompiledTemplate | null;
  /** `https://<api>/unsubscribe/` */
  unsubscribeBase: string;
  /** The sending domain's Return-Path domain, whose MX (the bounce MX) takes the mailto: unsubscribes. */
  returnPathDomain: string;
}

export interface PrepareOptions {
  region: string;
  unsubscribeBase: string;
  returnPathDomain: string;
}

export function prepareBroadcast(broadcast: Broadcast, options: PrepareOptions): PreparedBroadcast {
  const from = parseAddress(broadcast.from);
  if (!from) throw new Error(`Broadcast ${broadcast.id} has an invalid from address.`);
  return {
    broadcast,
    region: options.region,
    fromDomain: addressDomain(from.address),
    replyTo: (broadcast.replyTo ?? []).map((r) => parseAddress(r)?.address ?? r),
    subject: compileTemplate(broadcast.subject),
    html: broadcast.html === null ? null : compileTemplate(withPreheader(broadcast.html, broadcast.previewText)),
    text: broadcast.text === null ? null : compileTemplate(broadcast.text),
    unsubscribeBase: options.unsubscribeBase.replace(/\/*$/, '/'),
    returnPathDomain: options.returnPathDomain,
  };
}

/**
 * One recipient's email: its own merge values, its own List-Unsubscribe link and mailbox (signed
 * tokens naming this email), sent as an ordinary email of the team (source `api`) linked to the
 * broadcast. `dispatchId` is the outbox row the chunk's emails share.
 */
export function recipientEmail(p: PreparedBroadcast, r: Recipient, emailId: string, dispatchId: string, unsubscribe: Unsubscribe): NewEmail {
  const { link, mailbox } = unsubscribe;
  const values: MergeValues = {
    contact: { ...r.properties, email: r.email, first_name: r.firstName, last_name: r.lastName },
    fallbacks: {},
    unsubscribeUrl: link,
  };
  const b = p.broadcast;
  return {
    id: emailId,
    teamId: b.teamId,
    region: p.region,
    source: 'api',
    apiKeyId: null,
    broadcastId: b.id,
    idempotencyKey: null,
    dispatchId,
    email: {
      from: b.from,
      fromDomain: p.fromDomain,
      to: [r.email],
      cc: [],
      bcc: [],
      replyTo: p.replyTo,
      subject: renderTemplate(p.subject, values, false).replace(/[\r\n]+/g, ' '),
      html: p.html && renderTemplate(p.html, values, true),
      text: p.text && renderTemplate(p.text, values, false),
      headers: mailbox === null ? null : listUnsubscribeHeaders(link, mailbox),
      attachments: [],
      tags: null,
      scheduledAt: null,
      recipients: [{ kind: 'to', address: r.email }],
    },
  };
}

/** Where a recipient unsubscribes: the link (merge tag and header) and the mailbox (header; none for a test send). */
export interface Unsubscribe {
  link: string;
  mailbox: string | null;
}

/** A recipient's own signed link and mailbox, both naming its email. */
export function unsubscribeOf(p: PreparedBroadcast, emailId: string, keys: UnsubscribeKeys): Unsubscribe {
  return { link: `${p.unsubscribeBase}${keys.token(emailId)}`, mailbox: keys.mailbox(emailId, p.returnPathDomain) };
}

/** RFC 2369 and RFC 8058: the link first (one-click POST), then the mailbox. */
export function listUnsubscribeHeaders(link: string, mailbox: string): Record<string, string> {
  return {
    'List-Unsubscribe': `<${link}>, <mailto:${mailbox}?subject=unsubscribe>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}

/**
 * The preview text as the first thing in the body, hidden: mail clients show it after the
 * subject in the inbox list. Followed by spacers so the body's own first words do not run on.
 */
export function withPreheader(html: string, previewText: string | null): string {
  if (!previewText) return html;
  const preheader =
    `<div style="display:none;max-height:0;overflow:hidden;opacity:0;mso-hide:all">${escapeHtml(previewText)}` +
    `${'&#8199;&#65279;&#847; '.repeat(20)}</div>`;
  const body = /<body[^>]*>/i.exec(html);
  if (!body) return preheader + html;
  const at = body.index + body[0].length;
  return html.slice(0, at) + preheader + html.slice(at);
}
