/**
 * What the content rules read of a message's bodies: its links, its images and how much text a
 * reader sees. A scanner over tags, not an HTML parser: it only needs `<a href>`, `<img>` and the
 * text between tags, and it runs once per email, off the send path (see insights.service.ts).
 */

export interface ScannedLink {
  /** As written, entities decoded. */
  url: string;
  /** Lowercased host of an http(s) URL; null for any other scheme or an unparsable URL. */
  host: string | null;
  /** The text a reader sees as the link (tags dropped, whitespace collapsed); null for a URL of the text part. */
  text: string | null;
  /** Marked `data-herald-no-track`: click tracking leaves it alone. */
  noTrack: boolean;
}

export interface ScannedImage {
  src: string;
  /** The `alt` attribute; null when the tag has none (an empty `alt` marks a decorative image). */
  alt: string | null;
}

export interface MessageScan {
  /** Links of the HTML part (`<a href>`), or the URLs of the text part when there is no HTML. */
  links: ScannedLink[];
  images: ScannedImage[];
  /** Characters of visible HTML text (whitespace collapsed); null without an HTML part. */
  visibleTextLength: number | null;
  /** UTF-8 bytes of the HTML part (what Gmail's clipping counts); 0 without one. */
  htmlBytes: number;
}

const COMMENTS = /<!--[\s\S]*?-->/g;
const INVISIBLE_ELEMENTS = /<(script|style|head|title|template)\b[\s\S]*?<\/\1\s*>/gi;
const TAG = /<\/?[a-z][^>]*>/gi;
const ANCHOR_OR_IMAGE = /<(a|img)\b((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
const ATTRIBUTE = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;
const TEXT_URL = /\bhttps?:\/\/[^\s<>"')\]]+/gi;
const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function scanMessage(html: string | null, text: string | null): MessageScan {
  if (html === null) {
    const links = (text ?? '').match(TEXT_URL) ?? [];
    return { links: links.map((url) => ({ ...toLink(url), text: null, noTrack: false })), images: [], visibleTextLength: null, htmlBytes: 0 };
  }
  const markup = html.replace(COMMENTS, '');
  const lower = markup.toLowerCase();
  const links: ScannedLink[] = [];
  const images: ScannedImage[] = [];
  for (const match of markup.matchAll(ANCHOR_OR_IMAGE)) {
    const [whole, tag, attributeText] = match;
    const attributes = parseAttributes(attributeText);
    if (tag.toLowerCase() === 'a') {
      const href = attributes.get('href');
      if (!href) continue;
      const start = match.index + whole.length;
      const end = lower.indexOf('</a', start);
      const inner = markup.slice(start, end === -1 ? markup.length : end);
      links.push({ ...toLink(href), text: visibleText(inner), noTrack: attributes.has('data-herald-no-track') });
    } else {
      images.push({ src: attributes.get('src') ?? '', alt: attributes.has('alt') ? (attributes.get('alt') ?? '') : null });
    }
  }
  const visible = visibleText(markup.replace(INVISIBLE_ELEMENTS, ' '));
  return { links, images, visibleTextLength: visible.length, htmlBytes: Buffer.byteLength(html, 'utf8') };
}

function visibleText(markup: string): string {
  return decodeEntities(markup.replace(TAG, ' '))
    .replace(/[\s\u200b-\u200d\u2060\ufeff\u034f]+/g, ' ')
    .trim();
}

function parseAttributes(text: string): Map<string, string | undefined> {
  const attributes = new Map<string, string | undefined>();
  for (const [, name, double, single, bare] of text.matchAll(ATTRIBUTE)) {
    const key = name.toLowerCase();
    const value = double ?? single ?? bare;
    if (!attributes.has(key)) attributes.set(key, value === undefined ? undefined : decodeEntities(value).trim());
  }
  return attributes;
}

function toLink(url: string): Pick<ScannedLink, 'url' | 'host'> {
  return { url, host: httpHost(url) };
}

/** The host of an http(s) URL, lowercased, without brackets for IPv6; null otherwise. */
export function httpHost(url: string): string | null {
  if (!/^https?:\/\//i.test(url)) return null;
  try {
    return new URL(url).hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
  } catch {
    return null;
  }
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? entity;
  });
}
