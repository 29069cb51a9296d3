import type { Alignment, Block, EmailDocument, Inline, Mark } from './email-document.types';
import { mergeTag, splitMergeTags } from './merge-tags';

/** The email's look: one light theme, system fonts, a 600 px card (what most clients show well). */
const FONT = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
const COLOR = { text: '#18181b', muted: '#71717a', rule: '#e4e4e7', link: '#2563eb', button: '#18181b', buttonText: '#ffffff', page: '#f4f4f5' };
const HEADING_SIZES = { 1: [28, 36], 2: [22, 30], 3: [18, 26], 4: [16, 24], 5: [14, 22], 6: [13, 20] } as const;
const BLOCK_GAP = 16;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** Escapes typed text but keeps the merge tags written in it whole, so the broadcasts side finds them. */
const textHtml = (text: string) =>
  splitMergeTags(text)
    .map((part) => (part.tag ? part.text : escapeHtml(part.text)))
    .join('');

/** An attribute value: merge tags kept, the rest escaped (validation has ruled out quotes and brackets in tags). */
const attr = textHtml;

const style = (rules: Record<string, string | number | undefined>) =>
  Object.entries(rules)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}:${value}`)
    .join(';');

const presentation = (inner: string, cellStyle: string, align?: Alignment, tableStyle = '') =>
  `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border-collapse:collapse${tableStyle}"><tr><td${align ? ` align="${align === 'justify' ? 'left' : align}"` : ''} style="${cellStyle}">${inner}</td></tr></table>`;

export function renderHtml(document: EmailDocument): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en" xmlns="http://www.w3.org/1999/xhtml">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="x-apple-disable-message-reformatting">',
    '<meta name="color-scheme" content="light">',
    // Columns stack on narrow screens (clients that drop <style> keep them side by side, still readable).
    '<style>@media only screen and (max-width:620px){.herald-column{display:block!important;width:100%!important;padding:0 0 8px 0!important}.herald-card{padding:24px 16px!important}}</style>',
    '</head>',
    `<body style="${style({ margin: 0, padding: 0, 'background-color': COLOR.page })}">`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="${style({ 'background-color': COLOR.page, 'border-collapse': 'collapse' })}"><tr><td align="center" style="padding:24px 8px">`,
    `<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="${style({ width: '100%', 'max-width': '600px', 'background-color': '#ffffff', 'border-collapse': 'separate', 'border-radius': '8px' })}"><tr>`,
    `<td class="herald-card" style="${style({ padding: '32px', 'font-family': FONT, 'font-size': '16px', 'line-height': '24px', color: COLOR.text, 'text-align': 'left' })}">`,
    blocksHtml(trimTrailingEmpty(document.blocks)),
    '</td></tr></table>',
    '</td></tr></table>',
    '</body>',
    '</html>',
  ].join('\n');
}

/** The editor keeps an empty paragraph at the end of every container for the cursor: it is not content. */
export function trimTrailingEmpty(blocks: Block[]): Block[] {
  let end = blocks.length;
  while (end > 0) {
    const last = blocks[end - 1];
    if (last.type !== 'paragraph' || last.content.length) break;
    end--;
  }
  return blocks.slice(0, end);
}

function blocksHtml(blocks: Block[]): string {
  return blocks.map(blockHtml).join('\n');
}

function blockHtml(block: Block): string {
  switch (block.type) {
    case 'paragraph':
      return `<p style="${style({ margin: `0 0 ${BLOCK_GAP}px`, 'text-align': block.alignment ?? undefined })}">${inlinesHtml(block.content) || '&nbsp;'}</p>`;
    case 'heading': {
      const [size, line] = HEADING_SIZES[block.level];
      const rules = {
        margin: `0 0 ${BLOCK_GAP}px`,
        'font-size': `${size}px`,
        'line-height': `${line}px`,
        'font-weight': 700,
        'text-align': block.alignment ?? undefined,
      };
      return `<h${block.level} style="${style(rules)}">${inlinesHtml(block.content) || '&nbsp;'}</h${block.level}>`;
    }
    case 'button': {
      const link = style({
        display: 'inline-block',
        'background-color': COLOR.button,
        color: COLOR.buttonText,
        'font-weight': 600,
        'text-decoration': 'none',
        padding: '12px 24px',
        'border-radius': '6px',
      });
      const label = inlinesHtml(block.content, COLOR.buttonText) || 'Button';
      return presentation(
        `<a href="${attr(block.href)}" target="_blank" style="${link}">${label}</a>`,
        `padding:0 0 ${BLOCK_GAP}px`,
        block.alignment,
      );
    }
    case 'image': {
      const size = block.width === null ? '' : ` width="${block.width}"`;
      const imageStyle = style({
        display: 'inline-block',
        border: 0,
        outline: 'none',
        'max-width': '100%',
        height: 'auto',
        width: block.width === null ? undefined : `${block.width}px`,
      });
      const img = `<img src="${escapeHtml(block.src)}" alt="${escapeHtml(block.alt)}"${size} style="${imageStyle}">`;
      const inner = block.href ? `<a href="${attr(block.href)}" target="_blank">${img}</a>` : img;
      return presentation(inner, `padding:0 0 ${BLOCK_GAP}px`, block.alignment);
    }
    case 'columns': {
      const width = `${Math.floor(100 / block.columns.length)}%`;
      const cells = block.columns.map(
        (column, index) =>
          `<td class="herald-column" width="${width}" valign="top" style="${style({ width, 'vertical-align': 'top', padding: index === 0 ? '0 8px 0 0' : index === block.columns.length - 1 ? '0 0 0 8px' : '0 8px' })}">${blocksHtml(trimTrailingEmpty(column))}</td>`,
      );
      return `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border-collapse:collapse"><tr>${cells.join('')}</tr></table>`;
    }
    case 'divider':
      return presentation(
        '&nbsp;',
        style({ 'border-top': `1px solid ${COLOR.rule}`, 'font-size': '1px', 'line-height': '1px', height: '1px' }),
        undefined,
        `;margin:8px 0 ${BLOCK_GAP + 8}px`,
      );
    case 'spacer':
      return presentation('&nbsp;', style({ height: `${block.height}px`, 'font-size': '1px', 'line-height': `${block.height}px` }));
    case 'footer': {
      const rules = style({
        'border-top': `1px solid ${COLOR.rule}`,
        padding: '16px 0 0',
        'font-size': '12px',
        'line-height': '18px',
        color: COLOR.muted,
        'text-align': 'center',
      });
      const body = inlinesHtml(block.content, COLOR.muted);
      const unsubscribe = `<a href="${mergeTag('RESEND_UNSUBSCRIBE_URL', null)}" target="_blank" style="color:${COLOR.muted};text-decoration:underline">Unsubscribe</a>`;
      return presentation(body ? `${body}<br>${unsubscribe}` : unsubscribe, rules);
    }
    case 'list': {
      const tag = block.ordered ? 'ol' : 'ul';
      const items = block.items.map((item) => `<li style="margin:0 0 4px">${listItemHtml(item)}</li>`).join('');
      return `<${tag} style="margin:0 0 ${BLOCK_GAP}px;padding:0 0 0 24px">${items}</${tag}>`;
    }
    case 'blockquote':
      return `<blockquote style="${style({ margin: `0 0 ${BLOCK_GAP}px`, padding: '0 0 0 16px', 'border-left': `4px solid ${COLOR.rule}`, color: '#52525b' })}">${blocksHtml(trimTrailingEmpty(block.content))}</blockquote>`;
    case 'codeBlock':
      return `<pre style="${style({ margin: `0 0 ${BLOCK_GAP}px`, padding: '12px', 'background-color': COLOR.page, 'border-radius': '6px', 'font-family': 'Menlo, Consolas, monospace', 'font-size': '13px', 'line-height': '20px', 'white-space': 'pre-wrap' })}">${textHtml(block.text)}</pre>`;
    case 'section':
      return presentation(blocksHtml(trimTrailingEmpty(block.content)), `padding:0 0 ${BLOCK_GAP}px`);
  }
}

/** A list item's paragraphs run inline (no paragraph margins inside the bullet). */
function listItemHtml(blocks: Block[]): string {
  return trimTrailingEmpty(blocks)
    .map((block) => (block.type === 'paragraph' ? inlinesHtml(block.content) : blockHtml(block)))
    .join('<br>');
}

function inlinesHtml(inlines: Inline[], linkColor = COLOR.link): string {
  return inlines.map((inline) => inlineHtml(inline, linkColor)).join('');
}

function inlineHtml(inline: Inline, linkColor: string): string {
  if (inline.type === 'hardBreak') return '<br>';
  const body = inline.type === 'text' ? textHtml(inline.text) : mergeTag(inline.key, inline.fallback);
  // Links outermost, so a link's color is not overridden by an inner mark's element.
  const ordered = [...inline.marks].sort((a, b) => (a.type === 'link' ? 1 : 0) - (b.type === 'link' ? 1 : 0));
  return ordered.reduce((html, mark) => markHtml(mark, html, linkColor), body);
}

function markHtml(mark: Mark, html: string, linkColor: string): string {
  switch (mark.type) {
    case 'bold':
      return `<strong>${html}</strong>`;
    case 'italic':
      return `<em>${html}</em>`;
    case 'underline':
      return `<u>${html}</u>`;
    case 'strike':
      return `<s>${html}</s>`;
    case 'sup':
      return `<sup>${html}</sup>`;
    case 'code':
      return `<code style="font-family:Menlo, Consolas, monospace;font-size:0.9em;background-color:${COLOR.page};padding:1px 4px;border-radius:4px">${html}</code>`;
    case 'uppercase':
      return `<span style="text-transform:uppercase">${html}</span>`;
    case 'link':
      return `<a href="${attr(mark.href)}" target="_blank" style="color:${linkColor};text-decoration:underline">${html}</a>`;
  }
}
