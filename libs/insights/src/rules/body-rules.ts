import type { ContentFacts, ReviewedEmail, Rule } from '../insight.types';
import { kilobytes, list, plural } from './wording';

/** Gmail shows "[Message clipped]" past 102 KB of HTML, hiding the rest (and the open pixel). */
export const GMAIL_CLIP_BYTES = 102 * 1024;
/** Fewer visible characters than this beside images: the message is a picture, not text. */
export const IMAGE_ONLY_TEXT_CHARS = 100;

const BULK_TAG_VALUES = /^(marketing|newsletter|promo|promotion|promotional|bulk|campaign|broadcast|digest)$/i;
const TRANSACTIONAL_WORDS =
  /\b(receipt|invoice|password|reset|verify|verification|confirm|confirmation|code|one-time|otp|2fa|two-factor|sign[- ]?in|log[- ]?in|magic link|security alert|order|shipped|shipping|delivery|payment|booking|reservation)\b/i;

/** Marks of mail sent to a list: list headers, a bulk precedence, an unsubscribe link, a marketing tag. */
export function looksBulk(email: ReviewedEmail): boolean {
  const h = email.headers;
  if (h['list-id'] || /^(bulk|list)$/i.test(h['precedence'] ?? '')) return true;
  if (email.tags.some((t) => BULK_TAG_VALUES.test(t.value) || BULK_TAG_VALUES.test(t.name))) return true;
  return /unsubscribe/i.test(email.html ?? '') || /unsubscribe/i.test(email.text ?? '');
}

/** One person's mail about their own account or order: receipts, codes, resets, shipping. */
export function looksTransactional(email: ReviewedEmail): boolean {
  if (looksBulk(email)) return false;
  if (email.tags.some((t) => /^transactional$/i.test(t.value))) return true;
  return TRANSACTIONAL_WORDS.test(email.subject);
}

export const plainTextMissing: Rule<ContentFacts> = {
  id: 'plain-text-missing',
  check({ email }) {
    if (email.html === null || (email.text ?? '').trim() !== '') return null;
    return {
      severity: 'attention',
      found: 'The email has an HTML part and no plain-text part.',
      fix: 'Send a `text` version too (multipart/alternative). Filters score HTML-only mail as more likely spam, and some readers and watches show only text.',
    };
  },
};

export const gmailClipping: Rule<ContentFacts> = {
  id: 'gmail-clipping',
  check({ scan }) {
    if (scan.htmlBytes <= GMAIL_CLIP_BYTES) return null;
    return {
      severity: 'attention',
      found: `The HTML part is ${kilobytes(scan.htmlBytes)}; Gmail clips messages over 102 KB.`,
      fix: 'Trim the HTML below 102 KB: inline less CSS, drop unused styles and comments, and link to content instead of embedding it. Gmail hides whatever is past the limit, including any footer and unsubscribe link.',
    };
  },
};

export const imagesWithoutAlt: Rule<ContentFacts> = {
  id: 'image-missing-alt',
  check({ scan }) {
    const missing = scan.images.filter((i) => i.alt === null);
    if (!missing.length) return null;
    return {
      severity: 'improvement',
      found: `${missing.length} of ${plural(scan.images.length, 'image')} ${missing.length === 1 ? 'has' : 'have'} no alt text: ${list(missing.map((i) => i.src || '(no src)'))}.`,
      fix: 'Give every image an `alt` describing it (or `alt=""` for a decorative one). Many clients block images by default, so the alt text is what readers, and screen readers, get.',
    };
  },
};

export const imageOnlyBody: Rule<ContentFacts> = {
  id: 'image-only',
  check({ scan }) {
    if (!scan.images.length || scan.visibleTextLength === null || scan.visibleTextLength >= IMAGE_ONLY_TEXT_CHARS) return null;
    return {
      severity: 'attention',
      found: `The HTML shows ${plural(scan.images.length, 'image')} and only ${plural(scan.visibleTextLength, 'character')} of text.`,
      fix: 'Put the message in text, with images beside it. Filters cannot read an image-only email and treat it as a way to hide content; with images blocked the reader sees nothing.',
    };
  },
};

export const listUnsubscribeMissing: Rule<ContentFacts> = {
  id: 'list-unsubscribe-missing',
  check({ email }) {
    if (!looksBulk(email)) return null;
    const header = email.headers['list-unsubscribe'];
    const oneClick = /list-unsubscribe=one-click/i.test(email.headers['list-unsubscribe-post'] ?? '');
    if (header && oneClick) return null;
    return {
      severity: 'attention',
      found: header
        ? 'The email looks like bulk mail and has a List-Unsubscribe header without one-click (`List-Unsubscribe-Post: List-Unsubscribe=One-Click`).'
        : 'The email looks like bulk mail (an unsubscribe link, a list header or a marketing tag) and has no List-Unsubscribe header.',
      fix: 'Add `List-Unsubscribe: <https://…>, <mailto:…>` and `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058) through `headers`, and honour the POST within 2 days. Gmail and Yahoo require one-click unsubscribe from bulk senders.',
    };
  },
};

export const BODY_RULES = [plainTextMissing, gmailClipping, imagesWithoutAlt, imageOnlyBody, listUnsubscribeMissing];
