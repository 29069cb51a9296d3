import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { contentTypeFor, DEFAULT_CONTENT_TYPE } from './content-type.table';
import { accept, reject, type NormalizedAttachment, type Validated } from './validation.types';
import { documentedAs, isAbsent, isPlainObject, mustBe, typeError } from '@herald/http';
import { fromZod, relay } from './validated.zod';

/*
 * Every problem inside one attachment is `invalid_attachment` (Resend's name for a missing
 * content/path, extended to the rest of the object); the `attachments` field itself being the
 * wrong type is a plain `validation_error`.
 */

const MAX_CONTENT_ID = 127; // Resend: "must be less than 128 characters"
const CONTROL = /\p{Cc}/u;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/; // standard or URL-safe alphabet; Buffer decodes both
const MIME_TYPE = /^[A-Za-z0-9][\w!#$&^.+-]*\/[A-Za-z0-9][\w!#$&^.+-]*(?:\s*;[^\p{Cc}]*)?$/u;
// Printable ASCII without `<` and `>`: the MIME builder adds the brackets of Content-ID itself.
const CONTENT_ID = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;

const invalid = (field: string, detail: string): Validated<never> =>
  reject(new HeraldError('invalid_attachment', `Invalid \`${field}\` field. ${detail}`));

const BYTES = z.array(z.int().min(0).max(255));
/** What `content` may be, for the document; decodeContent checks it with Resend's messages. */
const CONTENT_FORMS = z
  .union([z.string().meta({ contentEncoding: 'base64' }), BYTES, z.object({ type: z.literal('Buffer'), data: BYTES })])
  .meta({ description: 'The file: a base64 string, an array of bytes, or a JSON-serialized Node.js Buffer.' });

/** `attachments`: absent or null → []; otherwise an array of attachment objects. */
export const attachmentsSchema = z
  .array(documentedAs(z.unknown(), attachmentShape('attachments[]')), { error: typeError('an array of attachment objects') })
  .nullish()
  .transform((items, ctx) => (items ?? []).map((item, i) => relay(ctx, normalizeAttachment(item, `attachments[${i}]`))));

function normalizeAttachment(item: unknown, field: string): Validated<NormalizedAttachment> {
  const shape = attachmentShape(field).safeParse(item);
  const parsed = fromZod(shape);
  if (!parsed.ok) return reject(new HeraldError('invalid_attachment', parsed.error.message));
  const raw = parsed.value;
  // An empty string carries nothing; counting it as content would send an empty file silently.
  const hasContent = !isAbsent(raw.content) && raw.content !== '';
  const path = raw.path || null;
  if (hasContent === (path !== null)) {
    const both = hasContent ? ', not both' : '';
    return invalid(field, `Attachment must have either a \`content\` or \`path\`${both}.`);
  }
  if (path !== null && !isHttpUrl(path)) return invalid(`${field}.path`, 'It must be an http:// or https:// URL.');
  const content = hasContent ? decodeContent(raw.content, `${field}.content`) : accept(null);
  if (!content.ok) return content;
  const filename = raw.filename || null;
  return accept({
    filename,
    contentType: raw.content_type?.trim() || guessContentType(filename, path),
    contentId: raw.content_id || null,
    path,
    content: content.value,
    size: content.value?.length ?? 0,
  });
}

/** Field types and the single-field rules, with messages that name the attachment's index. */
function attachmentShape(field: string) {
  const text = (name: string) => z.string({ error: mustBe(`${field}.${name}`, 'a `string`') }).nullish();
  const rule = (name: string, detail: string) => `Invalid \`${field}.${name}\` field. ${detail}`;
  return z
    .object(
      {
        content: documentedAs(z.unknown().optional(), CONTENT_FORMS),
        filename: text('filename')
          .refine((v) => !v || !CONTROL.test(v), rule('filename', 'It must not contain control characters.'))
          .meta({ example: 'invoice.pdf' }),
        path: text('path').meta({ format: 'uri', description: 'An http(s) URL Herald fetches the file from.' }),
        content_type: text('content_type')
          .refine((v) => !v || MIME_TYPE.test(v.trim()), rule('content_type', 'It must be a MIME type such as `application/pdf`.'))
          .meta({ description: 'Guessed from the filename when absent.', example: 'application/pdf' }),
        content_id: text('content_id')
          .refine((v) => !v || v.length <= MAX_CONTENT_ID, rule('content_id', `It must be less than ${MAX_CONTENT_ID + 1} characters.`))
          .refine((v) => !v || CONTENT_ID.test(v), rule('content_id', 'It must not contain spaces, angle brackets, control or non-ASCII characters.'))
          .meta({ maxLength: MAX_CONTENT_ID, description: 'Makes the attachment inline, referenced as `cid:<content_id>`.' }),
      },
      { error: mustBe(field, 'an object with a `content` or `path`') },
    )
    .meta({ description: 'Exactly one of `content` and `path`.' });
}

function guessContentType(filename: string | null, path: string | null): string | null {
  const fromName = filename ? contentTypeFor(filename) : null;
  if (fromName) return fromName;
  if (path !== null) return contentTypeFor(new URL(path).pathname);
  return DEFAULT_CONTENT_TYPE;
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** Accepts what Resend's clients send: base64, byte arrays, and JSON-serialized Node Buffers. */
function decodeContent(content: unknown, field: string): Validated<Buffer> {
  if (typeof content === 'string') {
    // Line breaks are common in base64 produced for MIME (76-column lines).
    const compact = content.replace(/\s+/g, '');
    if (!BASE64.test(compact) || compact.length % 4 === 1) return invalid(field, 'The content is not valid base64.');
    return accept(Buffer.from(compact, 'base64'));
  }
  const bytes: unknown[] | null = Array.isArray(content)
    ? content
    : isPlainObject(content) && content['type'] === 'Buffer' && Array.isArray(content['data'])
      ? content['data']
      : null;
  if (bytes === null) {
    const forms = 'a base64 string, an array of bytes or a serialized Buffer (`{"type":"Buffer","data":[...]}`)';
    return invalid(field, `It must be ${forms}.`);
  }
  if (bytes.every(isByte)) return accept(Buffer.from(bytes));
  const bad = bytes.findIndex((b) => !isByte(b));
  return invalid(field, `Bytes must be integers from 0 to 255; item ${bad} is not.`);
}

const isByte = (b: unknown): b is number => typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255;
