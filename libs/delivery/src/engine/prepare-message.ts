import { addressAllowList, type AddressAllowList } from '@herald/core';
import { buildMessage, MessageBuildError, returnPathAddress, signDkim } from '../message';
import type { ClaimedEmail } from '@herald/messages';
import type { SenderIdentity } from './sender-identity';

export type PreparedMessage =
  | { kind: 'ready'; message: Buffer; envelopeFrom: string }
  | { kind: 'failed'; reason: string; message: string }
  | { kind: 'deferred'; message: string };

/**
 * The bytes every recipient domain of the email receives: built once, DKIM-signed once with the
 * sending domain's key, and the VERP Return-Path that brings bounces back to this email. An
 * attachment whose URL is gone, or points at a private address not in `attachmentAllowedAddresses`
 * (ATTACHMENT_ALLOWED_ADDRESSES), fails the email; one that could not be fetched right now defers it.
 */
export async function prepareMessage(
  email: ClaimedEmail,
  identity: SenderIdentity,
  verpKey: Buffer,
  maxBytes: number,
  attachmentAllowedAddresses: readonly string[] = [],
): Promise<PreparedMessage> {
  try {
    const raw = email.mime
      ? toCrlf(email.mime)
      : await buildMessage(
          {
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
          },
          { maxBytes, allowedAddresses: allowListOf(attachmentAllowedAddresses) },
        );
    return {
      kind: 'ready',
      message: await signDkim(raw, identity.signing),
      envelopeFrom: returnPathAddress(email.id, identity.returnPathDomain, verpKey),
    };
  } catch (error) {
    if (error instanceof MessageBuildError) {
      return error.permanent
        ? { kind: 'failed', reason: 'attachment_unavailable', message: error.message }
        : { kind: 'deferred', message: `451 4.3.0 Herald: ${error.message}` };
    }
    throw error;
  }
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
