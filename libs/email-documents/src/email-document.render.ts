import { renderHtml } from './email-document.html';
import { renderText } from './email-document.text';
import type { RenderedEmail } from './email-document.types';
import { validateEmailDocument } from './email-document.validation';

/**
 * The editor's document as the email that is sent: email-safe HTML (tables, inline styles) and
 * its plain-text part, merge tags (`{{{contact.first_name|there}}}`) left for the sender to fill
 * per recipient. Pure and synchronous: the API, the worker and the dashboard's preview run the
 * same code. Throws EmailDocumentError, naming the path, for a malformed document.
 */
export function renderEmailDocument(document: unknown): RenderedEmail {
  const valid = validateEmailDocument(document);
  return { html: renderHtml(valid), text: renderText(valid) };
}
