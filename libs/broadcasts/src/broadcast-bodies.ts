import { HeraldError } from '@herald/core';
import { EmailDocumentError, renderEmailDocument, validateEmailDocument } from '@herald/email-documents';
import type { BroadcastContent } from './broadcast.types';

/**
 * What a broadcast sends: its document rendered (the editor's blocks, by the same renderer the
 * dashboard previews with) when it has one, else its html and text as given. Merge tags stay in
 * as `{{{…}}}`, for each recipient's copy.
 */
export function bodiesOf(content: Pick<BroadcastContent, 'html' | 'text' | 'document'>): { html: string | null; text: string | null } {
  if (content.document === null || content.document === undefined) return { html: content.html, text: content.text };
  try {
    return renderEmailDocument(content.document);
  } catch (error) {
    throw documentError(error);
  }
}

/** A document is checked when it is stored, so a draft never holds one that cannot be sent. */
export function checkDocument(document: unknown): void {
  if (document === null || document === undefined) return;
  try {
    validateEmailDocument(document);
  } catch (error) {
    throw documentError(error);
  }
}

function documentError(error: unknown): unknown {
  if (error instanceof EmailDocumentError) return new HeraldError('validation_error', `Invalid \`document\` field: ${error.message}`);
  return error;
}
