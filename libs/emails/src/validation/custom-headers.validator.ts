import { z } from 'zod';
import { fail } from '@herald/http';

/*
 * Custom headers travel verbatim into the message, so this is where header injection and
 * identity spoofing are stopped: names must be RFC 5322 field names, values one line, and the
 * headers Herald writes itself (addressing, MIME structure, signatures) cannot be replaced.
 */

// RFC 5322 ftext: printable US-ASCII except the colon.
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
// A line is at most 998 octets (RFC 5322 §2.1.1) and a name cannot be folded: `Name: ` and one
// encoded word (75, RFC 2047) must fit on the field's first line.
const MAX_NAME_LENGTH = 998 - 2 - 75;
// A value may hold tabs but no CR/LF (a second header would follow) and no other controls (C0, DEL, C1).
const VALUE_FORBIDDEN = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;

/** Lowercased header name → the request field that sets it, or null when Herald alone does. */
const RESERVED = new Map<string, string | null>([
  ['from', 'from'],
  ['to', 'to'],
  ['cc', 'cc'],
  ['bcc', 'bcc'],
  ['reply-to', 'reply_to'],
  ['subject', 'subject'],
  ['date', null],
  ['message-id', null],
  ['content-type', null],
  ['mime-version', null],
  ['content-transfer-encoding', null],
  ['dkim-signature', null],
  ['return-path', null],
]);

const invalid = (detail: string): string => `Invalid \`headers\` field. ${detail}`;

/** `headers`: absent or null → null; otherwise an object of header name → string value. */
export const headersSchema = z
  .record(
    z.string(),
    z.string({
      error: (issue) => invalid(`The value of the \`${String(issue.path?.at(-1))}\` header must be a \`string\`.`),
    }),
    { error: 'The `headers` field must be an object of header names to `string` values.' },
  )
  .meta({
    description: 'Custom MIME headers, name to single-line value. Addressing, MIME and signature headers are set by Herald and refused here.',
    example: { 'X-Entity-Ref-ID': '123456789' },
  })
  .nullish()
  .transform((headers, ctx) => {
    if (!headers) return null;
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(headers)) {
      const key = name.toLowerCase();
      if (!FIELD_NAME.test(name)) {
        return fail(ctx, invalid(`\`${name}\` is not a valid header name: use printable ASCII without spaces or colons.`));
      }
      if (name.length > MAX_NAME_LENGTH) {
        return fail(ctx, invalid(`A header name must be at most ${MAX_NAME_LENGTH} characters (RFC 5322 limits a line to 998).`));
      }
      if (RESERVED.has(key)) return fail(ctx, invalid(reservedMessage(name, RESERVED.get(key) ?? null)));
      if (seen.has(key)) return fail(ctx, invalid(`The \`${name}\` header is given more than once.`));
      if (VALUE_FORBIDDEN.test(value)) {
        return fail(ctx, invalid(`The value of the \`${name}\` header must not contain line breaks or control characters.`));
      }
      seen.add(key);
    }
    return headers;
  });

function reservedMessage(name: string, field: string | null): string {
  return field === null
    ? `The \`${name}\` header is set by Herald and cannot be overridden.`
    : `The \`${name}\` header is set by Herald; use the \`${field}\` field instead.`;
}
