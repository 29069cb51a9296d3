import { z } from 'zod';
import { documentedAs, fail, typeError } from '@herald/http';

/* Resend's documented tag rules: name and value required, `[A-Za-z0-9_-]`, ≤ 256 chars, ≤ 75 tags. */

const MAX_TAGS = 75;
const MAX_LENGTH = 256;
const TAG_TEXT = /^[A-Za-z0-9_-]+$/;

/** A tag as Resend's clients send it and emails answer it; the text rules are checked below. */
export const tagSchema = z
  .object(
    {
      name: z.string({ error: typeError('a `string`') }),
      value: z.string({ error: typeError('a `string`') }),
    },
    { error: typeError('an object with a `name` and a `value`') },
  )
  .meta({ example: { name: 'category', value: 'confirm_email' } });

/** A tag as the text rules below accept it, for the document. */
const documentedTag = z.object({
  name: z.string().min(1).max(MAX_LENGTH).regex(TAG_TEXT),
  value: z.string().min(1).max(MAX_LENGTH).regex(TAG_TEXT),
});

/**
 * `tags`: absent or null → null. The count is checked on the raw list first, so a huge list
 * costs nothing to refuse. Duplicate names are kept: Resend does not document rejecting them,
 * and the webhook payload's `{name: value}` map simply keeps the last one.
 */
export const tagsSchema = documentedAs(
  z
    .array(z.unknown(), { error: typeError('an array of `{ name, value }` objects') })
    .max(MAX_TAGS, { error: `The \`tags\` field must not contain more than ${MAX_TAGS} tags.` }),
  z
    .array(documentedTag)
    .max(MAX_TAGS)
    .meta({ description: `At most ${MAX_TAGS} tags.` }),
)
  .nullish()
  .pipe(z.array(tagSchema).nullish())
  .transform((tags, ctx) => {
    if (!tags) return null;
    for (const [i, tag] of tags.entries()) {
      for (const part of ['name', 'value'] as const) {
        const problem = tagTextProblem(tag[part]);
        if (problem) return fail(ctx, `Invalid \`tags[${i}].${part}\` field. ${problem}`);
      }
    }
    return tags;
  });

function tagTextProblem(text: string): string | null {
  if (text === '') return 'It must not be empty.';
  if (text.length > MAX_LENGTH) return `Tags must be at most ${MAX_LENGTH} characters long.`;
  if (!TAG_TEXT.test(text)) return 'Tags should only contain ASCII letters, numbers, underscores, or dashes.';
  return null;
}
