import { addressDomain, newId, parseAddress } from '@herald/core';
import { escapeHtml, fillTemplate, type EmailTemplate, type NewEmail } from '@herald/messages';
import type { Broadcast } from './broadcast.types';
import { compileTemplate, renderTemplate, slottedParts, slotValues, type CompiledTemplate, type MergeTag, type MergeValues } from './merge-tags';
import type { UnsubscribeKeys } from './unsubscribe-token';

/** One recipient, as the fan-out reads a segment member. */
export interface Recipient {
  contactId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  /** The contact's own property values (null or absent: none); the properties' fallbacks are the broadcast's. */
  properties: Record<string, string | number | null>;
}

/** A broadcast compiled once for its fan-out: templates split, sender and links resolved. */
export interface PreparedBroadcast {
  broadcast: Broadcast;
  region: string;
  fromDomain: string;
  replyTo: string[];
  subject: CompiledTemplate;
  /**
   * The html and text, stored once for the broadcast's emails (written with the first chunk that
   * uses them); each email holds its value of each of `slots`, and its bodies are filled in when
   * read (libs/messages email-template.ts). A new id for each fan-out pass: the same content.
   */
  template: EmailTemplate;
  slots: MergeTag[];
  /** `https://<api>/unsubscribe/` */
  unsubscribeBase: string;
  /** The sending domain's Return-Path domain, whose MX (the bounce MX) takes the mailto: unsubscribes. */
  returnPathDomain: string;
  /** Each property's fallback_value: used when the contact has no value and the tag gives no fallback of its own. */
  fallbacks: Record<string, string | number | null>;
}

export interface PrepareOptions {
  region: string;
  unsubscribeBase: string;
  returnPathDomain: string;
  fallbacks?: Record<string, string | number | null>;
}

export function prepareBroadcast(broadcast: Broadcast, options: PrepareOptions): PreparedBroadcast {
  const from = parseAddress(broadcast.from);
  if (!from) throw new Error(`Broadcast ${broadcast.id} has an invalid from address.`);
  const slots: MergeTag[] = [];
  return {
    broadcast,
    region: options.region,
    fromDomain: addressDomain(from.address),
    replyTo: (broadcast.replyTo ?? []).map((r) => parseAddress(r)?.address ?? r),
    subject: compileTemplate(broadcast.subject),
    template: {
      id: newId(),
      html: broadcast.html === null ? null : slottedParts(compileTemplate(withPreheader(broadcast.html, broadcast.previewText)), slots),
      text: broadcast.text === null ? null : slottedParts(compileTemplate(broadcast.text), slots),
    },
    slots,
    unsubscribeBase: options.unsubscribeBase.replace(/\/*$/, '/'),
    returnPathDomain: options.returnPathDomain,
    fallbacks: options.fallbacks ?? {},
  };
}

/**
 * One recipient's email: its own merge values, its own List-Unsubscribe link and mailbox (signed
 * tokens naming this email), sent as an ordinary email of the team (source `api`) linked to the
 * broadcast. `dispatchId` is the outbox row the chunk's emails share. Its subject is rendered; its
 * bodies are the broadcast's template and this recipient's values (filledEmail renders them).
 */
export function recipientEmail(p: PreparedBroadcast, r: Recipient, emailId: string, dispatchId: string, unsubscribe: Unsubscribe): NewEmail {
  const { link, mailbox } = unsubscribe;
  const values: MergeValues = {
    contact: { ...r.properties, email: r.email, first_name: r.firstName, last_name: r.lastName },
    fallbacks: p.fallbacks,
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
      html: null,
      text: null,
      headers: mailbox === null ? null : listUnsubscribeHeaders(link, mailbox),
      attachments: [],
      tags: null,
      scheduledAt: null,
      recipients: [{ kind: 'to', address: r.email }],
    },
    template: { of: p.template, values: slotValues(p.slots, values) },
  };
}

/** The email with its bodies rendered in, and no template (a test send, a spec). */
export function filledEmail(email: NewEmail): NewEmail {
  if (!email.template) return email;
  const { of, values } = email.template;
  return {
    ...email,
    template: null,
    email: {
      ...email.email,
      html: of.html && fillTemplate(of.html, values, true),
      text: of.text && fillTemplate(of.text, values, false),
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
