import { z } from 'zod';
import { addressDomain, addressKey, parseAddress } from '@herald/core';
import type { NormalizedEmail } from './validation.types';
import { fail, invalidAddress, isAbsent, mustBe, typeError } from '@herald/http';

/** A parsed address field: the strings as given (trimmed) and their bare addresses. */
export interface AddressList {
  given: string[];
  addresses: string[];
}

/** `from`: one mailbox in either form; anything else is Resend's `invalid_from_address`. */
export const fromSchema = z
  .string({ error: typeError('a `string`') })
  .meta({ description: 'The sender: `email@example.com` or `Name <email@example.com>`.', example: 'Acme <onboarding@example.com>' })
  .transform((value, ctx) => {
    const parsed = parseAddress(value);
    if (!parsed) return fail(ctx, invalidAddress('from'), 'invalid_from_address');
    return { given: value.trim(), address: parsed.address, domain: addressDomain(parsed.address) };
  });

/**
 * `to`/`cc`/`bcc`/`reply_to`: a string or an array of strings, each one mailbox. The counts
 * (`max`, and at least one `to`) are checked on the raw body first (recipientCountProblem), with
 * Resend's messages; the schema states them too. A required list (`to`) is checked present first.
 */
export const addressListSchema = (field: string, max: number, { required = false } = {}) => {
  const list = z.union(
    [
      z.string().meta({ example: 'jane@example.com' }),
      z
        .array(z.string())
        .min(required ? 1 : 0)
        .max(max),
    ],
    {
      error: mustBe(field, 'a `string` or an array of strings'),
    },
  );
  const input: z.ZodType<string | string[] | null | undefined> = required ? list : list.nullish();
  return input.transform((value, ctx): AddressList => {
    const given = (value === null || value === undefined ? [] : typeof value === 'string' ? [value] : value).map((v) => v.trim());
    const addresses: string[] = [];
    for (const entry of given) {
      const parsed = parseAddress(entry);
      if (!parsed) return fail(ctx, invalidAddress(field));
      addresses.push(parsed.address);
    }
    return { given, addresses };
  });
};

/**
 * The problem with the recipient counts, if any. It reads the raw fields, before any address is
 * parsed, so an oversized list is refused without parsing it. Counts are as given, before
 * de-duplication: the limit also bounds the size of the address headers.
 */
export function recipientCountProblem(body: Record<string, unknown>, maxRecipients: number): string | null {
  const count = (field: string): number => {
    const value = body[field];
    return Array.isArray(value) ? value.length : isAbsent(value) ? 0 : 1;
  };
  const [to, cc, bcc, replyTo] = [count('to'), count('cc'), count('bcc'), count('reply_to')];
  if (to === 0) return 'The `to` field must contain at least one email address.';
  const atMost = `must not contain more than ${maxRecipients} email addresses`;
  if (to > maxRecipients) return `The \`to\` field ${atMost} (it has ${to}).`;
  if (to + cc + bcc > maxRecipients) {
    return `The \`to\`, \`cc\` and \`bcc\` fields ${atMost} in total (they have ${to + cc + bcc}).`;
  }
  if (replyTo > maxRecipients) {
    return `The \`reply_to\` field ${atMost} (it has ${replyTo}).`;
  }
  return null;
}

/** Each mailbox once across to/cc/bcc, case-insensitively; the first kind it appears in wins. */
export function uniqueRecipients(lists: Record<'to' | 'cc' | 'bcc', AddressList>): NormalizedEmail['recipients'] {
  const seen = new Set<string>();
  const recipients: NormalizedEmail['recipients'] = [];
  for (const kind of ['to', 'cc', 'bcc'] as const) {
    for (const address of lists[kind].addresses) {
      const key = addressKey(address);
      if (seen.has(key)) continue;
      seen.add(key);
      recipients.push({ kind, address });
    }
  }
  return recipients;
}
