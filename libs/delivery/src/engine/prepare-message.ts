import { addressAllowList, type AddressAllowList, type HmacSha256Key } from '@herald/core';
import type { ClaimedEmail, ClaimedRecipient } from '@herald/messages';
import type { RecipientHtml } from '@herald/tracking';
import { buildMessages, MessageBuildError, mimeHtml, returnPathAddress, signDkim, type OutgoingEmail } from '../message';
import type { SenderIdentity } from './sender-identity';

export type PreparedMessage =
  /** The same bytes for every recipient. */
  | { kind: 'ready'; message: Buffer; envelopeFrom: string }
  /** Tracked: each recipient's own bytes (its signed links and pixel), by recipient position. */
  | { kind: 'personal'; messages: Map<number, Buffer>; envelopeFrom: string }
  | { kind: 'failed'; reason: string; message: string }
  | { kind: 'deferred'; message: string };

/** Tracking: what makes each recipient's html (TrackingLinks), and the recipients to build it for. */
export interface Personalization {
  /** Each recipient's html from the email's html and headers; null when nothing in it is tracked. */
  track: (html: string | null, headers: Record<string, string> | null) => RecipientHtml | null;
  recipients: ClaimedRecipient[];
}

/**
 * The bytes every recipient domain of the email receives: built once, DKIM-signed once with the
 * sending domain's key, and the VERP Return-Path that brings bounces back to this email. A
 * tracked email (`personal`) is built and signed once per recipient instead, its html rewritten
 * before signing (in a message relayed over SMTP, its html part is replaced, every other byte
 * kept). An
 * attachment whose URL is gone, or points at a private address not in `attachmentAllowedAddresses`
 * (ATTACHMENT_ALLOWED_ADDRESSES), fails the email; one that could not be fetched right now defers it.
 */
export async function prepareMessage(
  email: ClaimedEmail,
  identity: SenderIdentity,
  verpKey: HmacSha256Key,
  maxBytes: number,
  attachmentAllowedAddresses: readonly string[] = [],
  personal: Personalization | null = null,
): Promise<PreparedMessage> {
  try {
    const envelopeFrom = returnPathAddress(email.id, identity.returnPathDomain, verpKey);
    const options = { maxBytes, allowedAddresses: allowListOf(attachmentAllowedAddresses) };
    const signedAt = new Date();
    const sign = async (messages: Buffer[]): Promise<PreparedMessage> => {
      const signed = await Promise.all(messages.map((raw) => signDkim(raw, identity.signing)));
      return { kind: 'personal', messages: new Map(personal!.recipients.map((r, i) => [r.position, signed[i]!])), envelopeFrom };
    };
    if (personal && email.mime) {
      const relayed = mimeHtml(toCrlf(email.mime));
      const render = relayed && personal.track(relayed.html, relayed.headers);
      if (render) return sign(personal.recipients.map((r) => relayed!.replace(render(r.position, signedAt))));
    } else if (personal) {
      const render = personal.track(email.html, email.headers);
      if (render) {
        const htmls = personal.recipients.map((r) => render(r.position, signedAt));
        return sign(await buildMessages(outgoing(email), htmls, options));
      }
    }
    const raw = email.mime ? toCrlf(email.mime) : (await buildMessages(outgoing(email), [email.html], options))[0]!;
    return { kind: 'ready', message: await signDkim(raw, identity.signing), envelopeFrom };
  } catch (error) {
    if (error instanceof MessageBuildError) {
      return error.permanent
        ? { kind: 'failed', reason: 'attachment_unavailable', message: error.message }
        : { kind: 'deferred', message: `451 4.3.0 Herald: ${error.message}` };
    }
    throw error;
  }
}

function outgoing(email: ClaimedEmail): OutgoingEmail {
  return {
    id: email.id,
    from: email.from,
    to: email.to,
    cc: email.cc,
    replyTo: email.replyTo,
    subject: email.subject,
    html: email.html,
    text: email.text,
    headers: email.headers,
    messageId: email.messageId,
    date: email.dueAt,
    attachments: email.attachments,
  };
}

/**
 * An SMTP-submitted message, with every line ending CRLF (the signer and SMTP both need it). The
 * relay refuses bare LF in DATA, so this normally returns the bytes untouched.
 */
function toCrlf(mime: Buffer): Buffer {
  let bare = false;
  for (let i = mime.indexOf(0x0a); i !== -1; i = mime.indexOf(0x0a, i + 1)) {
    if (i === 0 || mime[i - 1] !== 0x0d) {
      bare = true;
      break;
    }
  }
  return bare ? Buffer.from(mime.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1') : mime;
}

/** ATTACHMENT_ALLOWED_ADDRESSES as a matcher, built once per config list rather than per email. */
const allowLists = new WeakMap<readonly string[], AddressAllowList>();
function allowListOf(entries: readonly string[]): AddressAllowList {
  let allowed = allowLists.get(entries);
  if (!allowed) allowLists.set(entries, (allowed = addressAllowList(entries)));
  return allowed;
}
