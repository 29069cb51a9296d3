/**
 * An email's html, scanned once per email for its trackable links, then rendered once per
 * recipient with that recipient's signed URLs: the scan is the costly part and is shared, each
 * rendering is a join of strings.
 *
 * Trackable: the `href` of an `<a>` or `<area>` whose URL is http(s). Left alone: any other
 * scheme (mailto:, tel:, cid:, a fragment), a link carrying `data-herald-no-track`, an
 * unsubscribe link (a List-Unsubscribe target of the email, or one marked with
 * `data-herald-unsubscribe` or `rel="unsubscribe"`), and anything inside a comment, <script> or
 * <style>. The html is otherwise kept byte for byte.
 */
export class TrackedHtml {
  private constructor(
    /** The html around the links' href values: one more than `links`. */
    private readonly segments: string[],
    /** Each trackable link: its target (normalized, safe for a Location header) and its href as written. */
    readonly links: readonly { url: string; raw: string }[],
    /** Where the pixel goes in the last segment: before `</body>`, else at the end. */
    private readonly pixelAt: number,
  ) {}

  /** `unsubscribeUrls`: the email's List-Unsubscribe http(s) targets, never rewritten. */
  static parse(html: string, unsubscribeUrls: ReadonlySet<string> = new Set()): TrackedHtml {
    const segments: string[] = [];
    const links: { url: string; raw: string }[] = [];
    let from = 0;
    for (const href of trackableHrefs(html, unsubscribeUrls)) {
      segments.push(html.slice(from, href.start));
      links.push({ url: href.url, raw: html.slice(href.start, href.end) });
      from = href.end;
    }
    const last = html.slice(from);
    const body = last.toLowerCase().lastIndexOf('</body');
    segments.push(last);
    return new TrackedHtml(segments, links, body === -1 ? last.length : body);
  }

  /**
   * The html with each trackable link's href replaced by `clickUrl(index, url)` (kept as
   * written when there is no clickUrl or it answers null), and a 1×1 image of `pixelUrl` added
   * (none when null).
   */
  render(clickUrl: ((index: number, url: string) => string | null) | null, pixelUrl: string | null): string {
    let out = '';
    for (let i = 0; i < this.links.length; i++) {
      const link = this.links[i]!;
      const tracked = clickUrl?.(i, link.url) ?? null;
      out += this.segments[i];
      out += tracked === null ? link.raw : escapeAttribute(tracked);
    }
    const last = this.segments[this.segments.length - 1]!;
    if (pixelUrl === null) return out + last;
    return out + last.slice(0, this.pixelAt) + pixel(pixelUrl) + last.slice(this.pixelAt);
  }
}

const pixel = (url: string): string =>
  `<img src="${escapeAttribute(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">`;

const escapeAttribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

interface Href {
  /** Offsets of the attribute's value in the html, quotes excluded. */
  start: number;
  end: number;
  url: string;
}

const LINK_TAG = /^<(a|area)[\s/>]/i;
const RAW_TEXT = /^<(script|style)[\s/>]/i;
/** One attribute: its name, then an optional value, double-, single- or un-quoted. */
const ATTRIBUTE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/y;

function* trackableHrefs(html: string, unsubscribeUrls: ReadonlySet<string>): Generator<Href> {
  let i = html.indexOf('<');
  while (i !== -1) {
    if (html.startsWith('<!--', i)) {
      const end = html.indexOf('-->', i + 4);
      if (end === -1) return;
      i = html.indexOf('<', end + 3);
      continue;
    }
    const head = html.slice(i, i + 8);
    const raw = RAW_TEXT.exec(head);
    if (raw) {
      const close = html.toLowerCase().indexOf(`</${raw[1]!.toLowerCase()}`, i + 1);
      if (close === -1) return;
      i = html.indexOf('<', close + 2);
      continue;
    }
    if (!LINK_TAG.test(head)) {
      i = html.indexOf('<', i + 1);
      continue;
    }
    const tag = readTag(html, i + 1 + /^<(a|area)/i.exec(head)![1]!.length);
    const href = tag.attributes.get('href');
    if (href && !tag.attributes.has('data-herald-no-track') && !isUnsubscribe(tag.attributes, href, unsubscribeUrls)) {
      const url = trackableUrl(decodeEntities(href.value));
      if (url) yield { start: href.start, end: href.end, url };
    }
    i = html.indexOf('<', tag.end);
  }
}

interface Attribute {
  value: string;
  start: number;
  end: number;
}

/** The attributes of the tag whose name ends at `from` (names lowercased, the first of a name wins), and where the tag ends. */
function readTag(html: string, from: number): { attributes: Map<string, Attribute>; end: number } {
  const attributes = new Map<string, Attribute>();
  let at = from;
  while (at < html.length) {
    while (at < html.length && /[\s/]/.test(html[at]!)) at++;
    if (at >= html.length || html[at] === '>') break;
    ATTRIBUTE.lastIndex = at;
    const match = ATTRIBUTE.exec(html);
    if (!match) {
      at++;
      continue;
    }
    const name = match[1]!.toLowerCase();
    const value = match[2] ?? match[3] ?? match[4];
    if (!attributes.has(name)) {
      const quoted = match[2] !== undefined || match[3] !== undefined;
      const end = at + match[0].length - (quoted ? 1 : 0);
      attributes.set(name, { value: value ?? '', start: value === undefined ? end : end - value.length, end });
    }
    at += match[0].length;
  }
  return { attributes, end: Math.min(at + 1, html.length) };
}

function isUnsubscribe(attributes: Map<string, Attribute>, href: Attribute, unsubscribeUrls: ReadonlySet<string>): boolean {
  if (attributes.has('data-herald-unsubscribe')) return true;
  if (/(^|\s)unsubscribe(\s|$)/i.test(attributes.get('rel')?.value ?? '')) return true;
  return unsubscribeUrls.has(decodeEntities(href.value).trim());
}

/** The http(s) URL a link goes to, normalized (percent-encoded) so it is a valid Location; null for any other. */
function trackableUrl(href: string): string | null {
  const text = href.trim();
  if (!/^https?:\/\//i.test(text)) return null;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', sol: '/', colon: ':', equals: '=' };

/** The character references an href may hold (`&amp;` in a query string above all). */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

/** The http(s) targets of a List-Unsubscribe header value (`<https://…>, <mailto:…>`). */
export function listUnsubscribeUrls(value: string | undefined): Set<string> {
  const urls = new Set<string>();
  for (const match of (value ?? '').matchAll(/<\s*([^>]+?)\s*>/g)) if (/^https?:/i.test(match[1]!)) urls.add(match[1]!);
  return urls;
}
