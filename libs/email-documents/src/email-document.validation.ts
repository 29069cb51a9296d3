import type { Alignment, Block, EmailDocument, Inline, Mark } from './email-document.types';
import { isAllowedHref, isAllowedImageSrc, MERGE_TAG_FALLBACK, MERGE_TAG_KEY } from './merge-tags';

/** A malformed document: `path` names the offending part (`document.content[1].attrs.href`), and the message starts with it. */
export class EmailDocumentError extends Error {
  readonly code = 'invalid_document';
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path} ${problem}`);
    this.name = 'EmailDocumentError';
  }
}

export const MAX_DOCUMENT_BYTES = 512 * 1024;
export const MAX_DOCUMENT_DEPTH = 40;
const MAX_SPACER_PX = 200;
const MAX_IMAGE_WIDTH_PX = 600;
const ALIGNMENTS = new Set<string>(['left', 'center', 'right', 'justify']);
const SIMPLE_MARKS = new Set<string>(['bold', 'italic', 'underline', 'strike', 'code', 'sup', 'uppercase']);
/** Marks the editor may carry that change nothing in the email (pasted styles). */
const IGNORED_MARKS = new Set<string>(['preservedStyle', 'textStyle']);
const COLUMNS: Record<string, number> = { twoColumns: 2, threeColumns: 3, fourColumns: 4 };
/** Wrappers the editor adds around content (its container, pasted bodies and divs): their blocks render in place. */
const TRANSPARENT = new Set<string>(['container', 'body', 'div']);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks an editor document and answers its typed form. Rejects, naming the path, anything the
 * renderer would have to guess about: unknown node types, missing text, unsafe or relative links.
 */
export function validateEmailDocument(document: unknown): EmailDocument {
  let size: number;
  try {
    size = new TextEncoder().encode(JSON.stringify(document) ?? '').length;
  } catch {
    throw new EmailDocumentError('document', 'is not JSON (it has a cycle or a value JSON cannot hold)');
  }
  if (size > MAX_DOCUMENT_BYTES) throw new EmailDocumentError('document', `is ${size} bytes of JSON; the most is ${MAX_DOCUMENT_BYTES}`);
  if (!isObject(document)) throw new EmailDocumentError('document', 'must be an object ({ "type": "doc", "content": [...] })');
  if (document['type'] !== 'doc') throw new EmailDocumentError('document.type', 'must be "doc"');
  return { blocks: blocksOf(document, 'document', 0) };
}

function contentOf(node: Json, path: string): unknown[] {
  const content = node['content'];
  if (content === undefined) return [];
  if (!Array.isArray(content)) throw new EmailDocumentError(`${path}.content`, 'must be an array');
  return content;
}

function attrsOf(node: Json, path: string): Json {
  const attrs = node['attrs'];
  if (attrs === undefined || attrs === null) return {};
  if (!isObject(attrs)) throw new EmailDocumentError(`${path}.attrs`, 'must be an object');
  return attrs;
}

function blocksOf(parent: Json, path: string, depth: number): Block[] {
  const blocks: Block[] = [];
  contentOf(parent, path).forEach((child, index) => {
    const childPath = `${path}.content[${index}]`;
    if (depth >= MAX_DOCUMENT_DEPTH) throw new EmailDocumentError(childPath, `is nested deeper than ${MAX_DOCUMENT_DEPTH} levels`);
    if (!isObject(child)) throw new EmailDocumentError(childPath, 'must be an object with a "type"');
    const type = child['type'];
    if (typeof type !== 'string') throw new EmailDocumentError(`${childPath}.type`, 'must be a string');
    if (type === 'globalContent' || type === 'previewText') return;
    if (TRANSPARENT.has(type)) blocks.push(...blocksOf(child, childPath, depth + 1));
    else blocks.push(blockOf(type, child, childPath, depth));
  });
  return blocks;
}

function blockOf(type: string, node: Json, path: string, depth: number): Block {
  const attrs = attrsOf(node, path);
  switch (type) {
    case 'paragraph':
      return { type, alignment: optionalAlignment(attrs, path), content: inlinesOf(node, path) };
    case 'heading':
      return { type, level: headingLevel(attrs, path), alignment: optionalAlignment(attrs, path), content: inlinesOf(node, path) };
    case 'button':
      return { type, href: href(attrs, path, '#'), alignment: optionalAlignment(attrs, path) ?? 'left', content: inlinesOf(node, path) };
    case 'image':
      return image(attrs, path);
    case 'twoColumns':
    case 'threeColumns':
    case 'fourColumns':
      return { type: 'columns', columns: columns(node, path, COLUMNS[type], depth) };
    case 'horizontalRule':
      return { type: 'divider' };
    case 'spacer':
      return { type, height: pixels(attrs['height'], `${path}.attrs.height`, 1, MAX_SPACER_PX) ?? 24 };
    case 'footer':
      return { type, content: inlinesOf(node, path) };
    case 'bulletList':
    case 'orderedList':
      return { type: 'list', ordered: type === 'orderedList', items: listItems(node, path, depth) };
    case 'blockquote':
      return { type, content: blocksOf(node, path, depth + 1) };
    case 'section':
      return { type, content: blocksOf(node, path, depth + 1) };
    case 'codeBlock':
      return {
        type,
        text: inlinesOf(node, path)
          .map((inline) => (inline.type === 'text' ? inline.text : inline.type === 'hardBreak' ? '\n' : ''))
          .join(''),
      };
    default:
      throw new EmailDocumentError(
        `${path}.type`,
        `"${type}" is not a block Herald renders (paragraph, heading, button, image, columns, divider, spacer, footer, lists, quote, code)`,
      );
  }
}

function image(attrs: Json, path: string): Block {
  const src = attrs['src'];
  if (typeof src !== 'string' || !isAllowedImageSrc(src))
    throw new EmailDocumentError(`${path}.attrs.src`, 'must be an absolute http(s) URL (upload the image to Herald)');
  const alt = attrs['alt'] ?? '';
  if (typeof alt !== 'string') throw new EmailDocumentError(`${path}.attrs.alt`, 'must be a string');
  const link = attrs['href'] === null || attrs['href'] === undefined || attrs['href'] === '' ? null : href(attrs, path, null);
  const width = attrs['width'] === 'auto' ? null : pixels(attrs['width'], `${path}.attrs.width`, 1, MAX_IMAGE_WIDTH_PX, true);
  return { type: 'image', src, alt, width, href: link, alignment: optionalAlignment(attrs, path) ?? 'center' };
}

function columns(node: Json, path: string, count: number, depth: number): Block[][] {
  const children = contentOf(node, path);
  if (children.length !== count) throw new EmailDocumentError(`${path}.content`, `must hold ${count} columns, not ${children.length}`);
  return children.map((column, index) => {
    const columnPath = `${path}.content[${index}]`;
    if (!isObject(column) || column['type'] !== 'columnsColumn') throw new EmailDocumentError(`${columnPath}.type`, 'must be "columnsColumn"');
    return blocksOf(column, columnPath, depth + 2);
  });
}

function listItems(node: Json, path: string, depth: number): Block[][] {
  return contentOf(node, path).map((item, index) => {
    const itemPath = `${path}.content[${index}]`;
    if (!isObject(item) || item['type'] !== 'listItem') throw new EmailDocumentError(`${itemPath}.type`, 'must be "listItem"');
    return blocksOf(item, itemPath, depth + 2);
  });
}

function inlinesOf(node: Json, path: string): Inline[] {
  return contentOf(node, path).map((child, index): Inline => {
    const childPath = `${path}.content[${index}]`;
    if (!isObject(child)) throw new EmailDocumentError(childPath, 'must be an object with a "type"');
    switch (child['type']) {
      case 'text': {
        const text = child['text'];
        if (typeof text !== 'string' || text === '') throw new EmailDocumentError(`${childPath}.text`, 'must be a non-empty string');
        return { type: 'text', text, marks: marksOf(child, childPath) };
      }
      case 'mergeTag': {
        const attrs = attrsOf(child, childPath);
        const key = attrs['key'];
        if (typeof key !== 'string' || !MERGE_TAG_KEY.test(key)) {
          throw new EmailDocumentError(`${childPath}.attrs.key`, 'must be a merge tag name such as contact.first_name or RESEND_UNSUBSCRIBE_URL');
        }
        const fallback = attrs['fallback'] ?? null;
        if (fallback !== null && (typeof fallback !== 'string' || !MERGE_TAG_FALLBACK.test(fallback))) {
          throw new EmailDocumentError(`${childPath}.attrs.fallback`, 'must be text without braces, quotes, angle brackets, "|" or line breaks');
        }
        return { type: 'mergeTag', key, fallback, marks: marksOf(child, childPath) };
      }
      case 'hardBreak':
        return { type: 'hardBreak' };
      default:
        throw new EmailDocumentError(`${childPath}.type`, `${JSON.stringify(child['type'])} is not inline content (text, mergeTag, hardBreak)`);
    }
  });
}

function marksOf(node: Json, path: string): Mark[] {
  const marks = node['marks'];
  if (marks === undefined) return [];
  if (!Array.isArray(marks)) throw new EmailDocumentError(`${path}.marks`, 'must be an array');
  return marks.flatMap((mark, index): Mark[] => {
    const markPath = `${path}.marks[${index}]`;
    if (!isObject(mark) || typeof mark['type'] !== 'string') throw new EmailDocumentError(`${markPath}.type`, 'must be a string');
    const type = mark['type'];
    if (type === 'link') return [{ type, href: href(attrsOf(mark, markPath), markPath, null) }];
    if (SIMPLE_MARKS.has(type)) return [{ type: type as Exclude<Mark['type'], 'link'> }];
    if (IGNORED_MARKS.has(type)) return [];
    throw new EmailDocumentError(
      `${markPath}.type`,
      `"${type}" is not a mark Herald renders (bold, italic, underline, strike, code, sup, uppercase, link)`,
    );
  });
}

function href(attrs: Json, path: string, fallback: string | null): string {
  const value = attrs['href'] ?? fallback;
  if (typeof value !== 'string' || !isAllowedHref(value.trim())) {
    throw new EmailDocumentError(`${path}.attrs.href`, 'must be an http(s) or mailto: URL, or a merge tag such as {{{RESEND_UNSUBSCRIBE_URL}}}');
  }
  return value.trim();
}

function optionalAlignment(attrs: Json, path: string): Alignment | null {
  const value = attrs['alignment'] ?? attrs['textAlign'] ?? null;
  if (value === null) return null;
  if (typeof value !== 'string' || !ALIGNMENTS.has(value))
    throw new EmailDocumentError(`${path}.attrs.alignment`, 'must be left, center, right or justify');
  return value as Alignment;
}

function headingLevel(attrs: Json, path: string): 1 | 2 | 3 | 4 | 5 | 6 {
  const level = attrs['level'] ?? 1;
  if (typeof level !== 'number' || !Number.isInteger(level) || level < 1 || level > 6)
    throw new EmailDocumentError(`${path}.attrs.level`, 'must be 1 to 6');
  return level as 1 | 2 | 3 | 4 | 5 | 6;
}

/** A length in pixels, as a number or a numeric string ("32", "32px"); `undefined` answers null. */
function pixels(value: unknown, path: string, min: number, max: number, clamp = false): number | null {
  if (value === undefined || value === null) return null;
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?(px)?$/.test(value.trim()) ? parseFloat(value) : NaN;
  if (!Number.isFinite(parsed) || parsed < min || (!clamp && parsed > max))
    throw new EmailDocumentError(path, `must be a number of pixels from ${min} to ${max}`);
  return Math.round(Math.min(parsed, max));
}
