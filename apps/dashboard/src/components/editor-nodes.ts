import { EmailNode } from '@react-email/editor/core';
import { mergeTag } from '@herald/email-documents';

// Herald's blocks beyond @react-email/editor's starter kit. The editor only draws them: the email
// itself is rendered by libs/email-documents, which knows these node types (spacer, footer, mergeTag).
const drawnOnly = () => null;

/** A merge-tag chip (`{{{contact.first_name|there}}}`): one atom in the text, never split or half-deleted. */
export const MergeTagNode = EmailNode.create({
  name: 'mergeTag',
  group: 'inline',
  inline: true,
  atom: true,
  selectable: true,
  addAttributes() {
    return {
      key: { default: 'contact.first_name', parseHTML: (element: HTMLElement) => element.getAttribute('data-merge-tag') },
      fallback: { default: null, parseHTML: (element: HTMLElement) => element.getAttribute('data-fallback') },
    };
  },
  parseHTML() {
    return [{ tag: 'span[data-merge-tag]' }];
  },
  renderHTML({ node }) {
    const { key, fallback } = node.attrs as { key: string; fallback: string | null };
    return [
      'span',
      { 'data-merge-tag': key, 'data-fallback': fallback ?? '', class: 'herald-merge-tag', contenteditable: 'false', title: mergeTag(key, fallback) },
      fallback ? `${key} · ${fallback}` : key,
    ];
  },
  renderText({ node }) {
    return mergeTag(node.attrs['key'] as string, (node.attrs['fallback'] as string | null) ?? null);
  },
  renderToReactEmail: drawnOnly,
});

/** Blank vertical space of a set height. */
export const SpacerNode = EmailNode.create({
  name: 'spacer',
  group: 'block',
  atom: true,
  draggable: true,
  addAttributes() {
    return { height: { default: 32, parseHTML: (element: HTMLElement) => Number(element.getAttribute('data-height')) || 32 } };
  },
  parseHTML() {
    return [{ tag: 'div[data-type="spacer"]' }];
  },
  renderHTML({ node }) {
    const height = node.attrs['height'] as number;
    return [
      'div',
      {
        'data-type': 'spacer',
        'data-height': String(height),
        class: 'herald-spacer',
        style: `height:${height}px`,
        'aria-label': `Spacer, ${height} pixels`,
      },
    ];
  },
  renderToReactEmail: drawnOnly,
});

/** The small print at the bottom; the email adds the unsubscribe link after it. */
export const FooterNode = EmailNode.create({
  name: 'footer',
  group: 'block',
  content: 'inline*',
  defining: true,
  parseHTML() {
    return [{ tag: 'div[data-type="footer"]' }];
  },
  renderHTML() {
    return ['div', { 'data-type': 'footer', class: 'herald-footer' }, 0];
  },
  renderToReactEmail: drawnOnly,
});
