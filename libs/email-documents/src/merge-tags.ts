/**
 * Resend's triple-brace merge tags: `{{{contact.first_name|there}}}`, `{{{contact.plan}}}`,
 * `{{{RESEND_UNSUBSCRIBE_URL}}}`. The renderer leaves them in both parts verbatim for the
 * broadcasts side to substitute per recipient (escaping the values it puts into the HTML), so a
 * fallback may not hold what would break out of an attribute or the tag itself.
 */
export const MERGE_TAG_KEY = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_-]*)?$/;
export const MERGE_TAG_FALLBACK = /^[^{}<>"|\r\n]*$/;
const MERGE_TAG = /\{\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)?)\s*(?:\|([^{}<>"|\r\n]*))?\}\}\}/g;

export function mergeTag(key: string, fallback: string | null): string {
  return fallback === null || fallback === '' ? `{{{${key}}}}` : `{{{${key}|${fallback}}}}`;
}

/** Splits typed text into plain runs and the merge tags written inside it (kept whole). */
export function splitMergeTags(text: string): { text: string; tag: boolean }[] {
  const parts: { text: string; tag: boolean }[] = [];
  let last = 0;
  for (const match of text.matchAll(MERGE_TAG)) {
    const at = match.index;
    if (at > last) parts.push({ text: text.slice(last, at), tag: false });
    parts.push({ text: match[0], tag: true });
    last = at + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), tag: false });
  return parts;
}

/** A URL attribute's value: http(s), mailto, `#` (a button not linked yet), or a merge tag (the unsubscribe URL). */
export function isAllowedHref(href: string): boolean {
  if (href === '#') return true;
  if (/^(https?:\/\/[^\s<>"]+|mailto:[^\s<>"]+)$/i.test(href)) return true;
  const parts = splitMergeTags(href);
  return parts.length > 0 && parts[0].tag && parts.every((part) => part.tag || !/[\s<>"]/.test(part.text));
}

/** An image source: an absolute http(s) URL (Herald's uploads are served from the API's public /images/ path). */
export function isAllowedImageSrc(src: string): boolean {
  return /^https?:\/\/[^\s<>"]+$/i.test(src);
}
