export { renderEmailDocument } from './email-document.render';
export { EmailDocumentError, validateEmailDocument, MAX_DOCUMENT_BYTES, MAX_DOCUMENT_DEPTH } from './email-document.validation';
export type { Block, EmailDocument, Inline, Mark, RenderedEmail } from './email-document.types';
export { mergeTag, splitMergeTags } from './merge-tags';
