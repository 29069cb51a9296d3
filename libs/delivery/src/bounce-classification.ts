import type { Bounce, BounceSubType, BounceType } from './delivery.types';

/** `550 5.1.1 ...` → 550 and `5.1.1`; either may be missing. */
export function parseSmtpReply(reply: string): { code: number | null; enhanced: string | null; text: string } {
  const trimmed = reply.trim();
  const code = /^([2-5]\d\d)[\s-]?/.exec(trimmed);
  const rest = code ? trimmed.slice(code[0].length) : trimmed;
  const enhanced = /^([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(rest.trim());
  return {
    code: code ? Number(code[1]) : null,
    enhanced: enhanced ? enhanced[0] : null,
    text: enhanced ? rest.trim().slice(enhanced[0].length).trim() : rest.trim(),
  };
}

const bounce = (type: BounceType, subType: BounceSubType, message: string, diagnostic: string): Bounce => ({
  type,
  subType,
  message,
  diagnosticCode: [`smtp; ${diagnostic}`],
});

/**
 * Resend's bounce type and subtype for a refusal, from the SMTP reply (`550 5.1.1 user unknown`)
 * or a DSN's status and diagnostic. The enhanced status code (RFC 3463) decides where there is
 * one; the text is a fallback for servers that omit it. Mailbox-full, too-large and content
 * refusals are Transient in Resend's taxonomy: the address itself is fine, so it is not suppressed.
 */
export function classifyRefusal(reply: string): Bounce {
  const { code, enhanced, text } = parseSmtpReply(reply);
  const diagnostic = reply.trim().replace(/\s+/g, ' ');
  const lower = text.toLowerCase();
  const [, subject, detail] = (enhanced ?? '').split('.').map(Number);

  if (enhanced) {
    if (subject === 1 && [1, 2, 3, 6, 10].includes(detail)) {
      return bounce('Permanent', 'NoEmail', "The recipient's mailbox does not exist.", diagnostic);
    }
    if (subject === 2 && detail === 2) return bounce('Transient', 'MailboxFull', "The recipient's mailbox is full.", diagnostic);
    if ((subject === 2 && detail === 3) || (subject === 3 && detail === 4)) {
      return bounce('Transient', 'MessageTooLarge', 'The message is larger than the recipient accepts.', diagnostic);
    }
    if (subject === 6 || (subject === 7 && /\bspam\b|content|virus|attachment/.test(lower))) {
      if (/attach/.test(lower)) return bounce('Transient', 'AttachmentRejected', 'The recipient refused an attachment.', diagnostic);
      return bounce('Transient', 'ContentRejected', "The recipient's server refused the content.", diagnostic);
    }
    // Security and policy (5.7.x: a blocklisted IP, failed authentication, a rate policy) say
    // nothing about the address, so they must not suppress it.
    if (subject === 7) return bounce('Transient', 'General', "The recipient's server refused the email by policy.", diagnostic);
  }
  if (/user unknown|no such user|does not exist|unknown user|invalid recipient|no mailbox/.test(lower)) {
    return bounce('Permanent', 'NoEmail', "The recipient's mailbox does not exist.", diagnostic);
  }
  if (/mailbox (is )?full|over quota|quota exceeded/.test(lower)) {
    return bounce('Transient', 'MailboxFull', "The recipient's mailbox is full.", diagnostic);
  }
  if (/too (large|big)|size limit|exceeds (the )?(maximum )?(message )?size/.test(lower)) {
    return bounce('Transient', 'MessageTooLarge', 'The message is larger than the recipient accepts.', diagnostic);
  }
  if (/attachment/.test(lower)) return bounce('Transient', 'AttachmentRejected', 'The recipient refused an attachment.', diagnostic);
  if (/\bspam\b|content|virus/.test(lower)) {
    return bounce('Transient', 'ContentRejected', "The recipient's server refused the content.", diagnostic);
  }
  if (/block|policy|reputation|denied/.test(lower)) {
    return bounce('Transient', 'General', "The recipient's server refused the email by policy.", diagnostic);
  }
  if (code !== null && code >= 500) {
    return bounce('Permanent', 'General', "The recipient's server refused the email permanently.", diagnostic);
  }
  return bounce('Undetermined', 'Undetermined', 'The email bounced for a reason the receiving server did not make clear.', diagnostic);
}

/** A bounce decided by Herald rather than by a reply (null MX, no such domain, expiry). */
export function heraldBounce(type: BounceType, subType: BounceSubType, message: string, diagnostic: string): Bounce {
  return { type, subType, message, diagnosticCode: [diagnostic] };
}

/** Whether a bounce means the address should never be tried again (suppression). */
export const isHardBounce = (b: Bounce): boolean => b.type === 'Permanent';
