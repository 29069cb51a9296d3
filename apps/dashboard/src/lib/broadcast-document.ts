/** A new broadcast's document: an empty heading and paragraph, ready to type in (what the editor opens with). */
export const EMPTY_DOCUMENT = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 1 }, content: [] },
    { type: 'paragraph', content: [] },
  ],
};
