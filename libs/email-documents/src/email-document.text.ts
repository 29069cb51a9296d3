import { trimTrailingEmpty } from './email-document.html';
import type { Block, EmailDocument, Inline } from './email-document.types';
import { mergeTag } from './merge-tags';

/** The plain-text part: the same content read top to bottom, links written out after their words. */
export function renderText(document: EmailDocument): string {
  return blocksText(trimTrailingEmpty(document.blocks))
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
    .concat('\n');
}

function blocksText(blocks: Block[]): string {
  return blocks.map((block) => `${blockText(block)}\n\n`).join('');
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'paragraph':
      return inlinesText(block.content);
    case 'heading':
      return inlinesText(block.content);
    case 'button': {
      const label = inlinesText(block.content) || 'Button';
      return block.href === '#' ? label : `${label}: ${block.href}`;
    }
    case 'image':
      if (!block.alt) return block.href ?? '';
      return block.href ? `${block.alt}: ${block.href}` : block.alt;
    case 'columns':
      return block.columns.map((column) => blocksText(trimTrailingEmpty(column)).trim()).join('\n\n');
    case 'divider':
      return '----------';
    case 'spacer':
      return '';
    case 'footer': {
      const body = inlinesText(block.content);
      const unsubscribe = `Unsubscribe: ${mergeTag('RESEND_UNSUBSCRIBE_URL', null)}`;
      return body ? `${body}\n${unsubscribe}` : unsubscribe;
    }
    case 'list':
      return block.items
        .map((item, index) => `${block.ordered ? `${index + 1}.` : '-'} ${indent(blocksText(trimTrailingEmpty(item)).trim())}`)
        .join('\n');
    case 'blockquote':
      return blocksText(trimTrailingEmpty(block.content))
        .trim()
        .split('\n')
        .map((line) => (line ? `> ${line}` : '>'))
        .join('\n');
    case 'codeBlock':
      return block.text;
    case 'section':
      return blocksText(trimTrailingEmpty(block.content)).trim();
  }
}

const indent = (text: string) => text.replace(/\n/g, '\n  ');

function inlinesText(inlines: Inline[]): string {
  let text = '';
  let link: { href: string; words: string } | null = null;
  const closeLink = () => {
    if (link && link.href !== '#' && link.words.trim() !== link.href) text += ` (${link.href})`;
    link = null;
  };
  for (const inline of inlines) {
    const href = inline.type === 'hardBreak' ? null : (inline.marks.find((mark) => mark.type === 'link')?.href ?? null);
    if (link && link.href !== href) closeLink();
    const words = inline.type === 'hardBreak' ? '\n' : inline.type === 'text' ? inline.text : mergeTag(inline.key, inline.fallback);
    const upper = inline.type === 'text' && inline.marks.some((mark) => mark.type === 'uppercase');
    if (href !== null) link ??= { href, words: '' };
    if (link) link.words += words;
    text += upper ? words.toUpperCase() : words;
  }
  closeLink();
  return text;
}
