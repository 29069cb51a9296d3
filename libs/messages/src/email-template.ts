/*
 * A body stored once for many emails (a broadcast's), with holes for each email's own values:
 * the fan-out writes the template once and, per email, only the values (a contact's merge
 * values, its unsubscribe link), and the body is filled in when it is read (the worker's claim,
 * GET /emails/:id). A broadcast of 100,000 emails so writes a kilobyte of values per thousand
 * emails where it wrote a megabyte of bodies.
 */

/** Literal text, and (as numbers) the index of the email's value that goes there. */
export type TemplateParts = readonly (string | number)[];

/** The bodies an email is filled from; immutable once written (the id names this content). */
export interface EmailTemplate {
  id: string;
  html: TemplateParts | null;
  text: TemplateParts | null;
}

/** An email's body from a template and its values; in html, each value is HTML-escaped. */
export function fillTemplate(parts: TemplateParts, values: readonly string[], html: boolean): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else {
      const value = values[part] ?? '';
      out += html ? escapeHtml(value) : value;
    }
  }
  return out;
}

/** The html and text of an email written from a template. */
export function filledBodies(template: EmailTemplate, values: readonly string[]): { html: string | null; text: string | null } {
  return {
    html: template.html && fillTemplate(template.html, values, true),
    text: template.text && fillTemplate(template.text, values, false),
  };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return /[&<>"']/.test(value) ? value.replace(/[&<>"']/g, (c) => ESCAPES[c]!) : value;
}
