/*
 * Resend's merge tags, in triple braces: `{{{contact.first_name|there}}}` (a contact field with a
 * fallback), `{{{contact.<property key>}}}` (a custom property, with the property's own fallback
 * when the contact has no value), and `{{{RESEND_UNSUBSCRIBE_URL}}}` (Herald also reads
 * `{{{HERALD_UNSUBSCRIBE_URL}}}`). Resend's older audience tags `{{{FIRST_NAME}}}`,
 * `{{{LAST_NAME}}}` and `{{{EMAIL}}}` name the same fields. A tag Herald does not know is left
 * as written, so a template language of the customer's own passes through untouched.
 *
 * A template is split into its text and its tags once per broadcast; each recipient's copy is
 * then one pass over the pieces, with the values HTML-escaped in the html part.
 */
import { escapeHtml } from '@herald/messages';

const TAG = /\{\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\|([^}]*))?\}\}\}/g;
const UNSUBSCRIBE_KEYS = new Set(['RESEND_UNSUBSCRIBE_URL', 'HERALD_UNSUBSCRIBE_URL']);
const LEGACY_FIELDS: Record<string, string> = { FIRST_NAME: 'first_name', LAST_NAME: 'last_name', EMAIL: 'email' };

export type MergeTag = { kind: 'unsubscribe' } | { kind: 'contact'; field: string; fallback: string | null };

/** A template split into literal text and tags: `parts[i]` is text when i is even, a tag when odd. */
export interface CompiledTemplate {
  readonly parts: readonly (string | MergeTag)[];
  /** The contact fields and properties the template reads. */
  readonly fields: ReadonlySet<string>;
}

/** What one recipient's copy is filled with. */
export interface MergeValues {
  /** first_name, last_name, email and the custom properties; null or absent when the contact has none. */
  contact: Readonly<Record<string, string | number | null | undefined>>;
  /** Each custom property's fallback_value, used when the contact has no value and the tag gives none. */
  fallbacks: Readonly<Record<string, string | number | null | undefined>>;
  unsubscribeUrl: string;
}

export function compileTemplate(source: string): CompiledTemplate {
  const parts: (string | MergeTag)[] = [];
  const fields = new Set<string>();
  let last = 0;
  for (const match of source.matchAll(TAG)) {
    const tag = tagOf(match[1]!, match[2]);
    if (!tag) continue;
    parts.push(source.slice(last, match.index), tag);
    if (tag.kind === 'contact') fields.add(tag.field);
    last = match.index + match[0].length;
  }
  parts.push(source.slice(last));
  return { parts, fields };
}

/** The recipient's copy; `html` escapes every value put in (contact data, fallbacks, the URL). */
export function renderTemplate(template: CompiledTemplate, values: MergeValues, html: boolean): string {
  const { parts } = template;
  if (parts.length === 1) return parts[0] as string;
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const value = valueOf(part, values);
    out += html ? escapeHtml(value) : value;
  }
  return out;
}

/**
 * A template's parts with each tag replaced by the index of its value in `slots` (a tag met
 * before, in this template or another, keeps its index): the form libs/messages stores once for a
 * broadcast's emails, each email then holding only its slots' values (see slotValues).
 */
export function slottedParts(template: CompiledTemplate, slots: MergeTag[]): (string | number)[] {
  return template.parts.map((part) => {
    if (typeof part === 'string') return part;
    const at = slots.findIndex((s) => sameTag(s, part));
    return at >= 0 ? at : slots.push(part) - 1;
  });
}

/** One recipient's value of each slot, unescaped (the html part escapes them as it is filled in). */
export function slotValues(slots: readonly MergeTag[], values: MergeValues): string[] {
  return slots.map((tag) => valueOf(tag, values));
}

function sameTag(a: MergeTag, b: MergeTag): boolean {
  if (a.kind === 'unsubscribe' || b.kind === 'unsubscribe') return a.kind === b.kind;
  return a.field === b.field && a.fallback === b.fallback;
}

/** Renders a template once, for previews and tests. */
export function renderMergeTags(source: string, values: MergeValues, html: boolean): string {
  return renderTemplate(compileTemplate(source), values, html);
}

function tagOf(key: string, fallback: string | undefined): MergeTag | null {
  if (UNSUBSCRIBE_KEYS.has(key)) return { kind: 'unsubscribe' };
  const legacy = LEGACY_FIELDS[key];
  if (legacy) return { kind: 'contact', field: legacy, fallback: fallback?.trim() ?? null };
  if (key.startsWith('contact.') && key.length > 'contact.'.length) {
    return { kind: 'contact', field: key.slice('contact.'.length), fallback: fallback?.trim() ?? null };
  }
  return null;
}

function valueOf(tag: MergeTag, values: MergeValues): string {
  if (tag.kind === 'unsubscribe') return values.unsubscribeUrl;
  const own = values.contact[tag.field];
  if (own !== null && own !== undefined && own !== '') return String(own);
  if (tag.fallback !== null) return tag.fallback;
  const fallback = values.fallbacks[tag.field];
  return fallback === null || fallback === undefined ? '' : String(fallback);
}
