/**
 * The editor's document: TipTap JSON as the dashboard's editor (@react-email/editor) produces it,
 * narrowed to the nodes and marks Herald renders. Validation turns `unknown` into these.
 */
export type Alignment = 'left' | 'center' | 'right' | 'justify';

export type Mark = { type: 'bold' | 'italic' | 'underline' | 'strike' | 'code' | 'sup' | 'uppercase' } | { type: 'link'; href: string };

export type Inline =
  { type: 'text'; text: string; marks: Mark[] } | { type: 'mergeTag'; key: string; fallback: string | null; marks: Mark[] } | { type: 'hardBreak' };

export type Block =
  | { type: 'paragraph'; alignment: Alignment | null; content: Inline[] }
  | { type: 'heading'; level: 1 | 2 | 3 | 4 | 5 | 6; alignment: Alignment | null; content: Inline[] }
  | { type: 'button'; href: string; alignment: Alignment; content: Inline[] }
  | { type: 'image'; src: string; alt: string; width: number | null; href: string | null; alignment: Alignment }
  | { type: 'columns'; columns: Block[][] }
  | { type: 'divider' }
  | { type: 'spacer'; height: number }
  | { type: 'footer'; content: Inline[] }
  | { type: 'list'; ordered: boolean; items: Block[][] }
  | { type: 'blockquote'; content: Block[] }
  | { type: 'codeBlock'; text: string }
  | { type: 'section'; content: Block[] };

export interface EmailDocument {
  blocks: Block[];
}

/** What renderEmailDocument answers: the two parts of the email, merge tags left in place. */
export interface RenderedEmail {
  html: string;
  text: string;
}
