import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { checkedFirst, documentedAs, fail, isAbsent, jsonBody, typeError } from '@herald/http';
import { attachmentsSchema } from './attachments.validator';
import { headersSchema } from './custom-headers.validator';
import { addressListSchema, fromSchema, recipientCountProblem } from './recipients.validator';
import { tagsSchema } from './tags.validator';
import type { SendLimits } from './validation.types';

/*
 * One email of POST /emails or POST /emails/batch, as one zod schema: the send validator parses
 * with it and /openapi.json is generated from it (io: 'input'). Checked in the order a client
 * fixes things: body shape, unsupported features, missing fields, recipient counts (before
 * parsing a list that is too long anyway), then each field's type and syntax in the order
 * Resend's docs list them. The schedule and the total size are checked once parsed.
 * Unknown fields are ignored, as Resend does (`react` is rendered by the Node SDK; `region` is
 * declared by its types but never sent).
 */

export type SendContext = 'email' | 'batch';

const REQUIRED = ['from', 'to', 'subject'] as const;
/** Accepted by Resend but not built yet; ignoring them would send something else than asked. */
const NOT_SUPPORTED = ['template', 'topic_id'] as const;

const text = z.string({ error: typeError('a `string`') }).nullish();
/** Control characters a subject may not hold: C0 but tab, CR and LF (folded), DEL and C1. */
const SUBJECT_FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;
const EACH = 'A mailbox, `email@example.com` or `Name <email@example.com>`, or an array of them.';

function fields(limits: SendLimits, context: SendContext) {
  const recipients = (field: string) => addressListSchema(field, limits.maxRecipients).meta({ description: EACH });
  const shape = {
    from: fromSchema,
    to: addressListSchema('to', limits.maxRecipients, { required: true }).meta({ description: `${EACH} At most ${limits.maxRecipients}.` }),
    cc: recipients('cc'),
    bcc: recipients('bcc'),
    reply_to: recipients('reply_to'),
    // A line break would end the Subject header (injection). Folded into spaces rather than refused:
    // a pasted subject with a stray newline is otherwise harmless, and Resend documents no error.
    // Other control characters (C0, DEL, C1) have no business in a subject and are refused.
    subject: z
      .string({ error: typeError('a `string`') })
      .meta({ description: 'Line breaks are folded into spaces; other control characters are refused.', example: 'Hello world' })
      .transform((s, ctx) => {
        if (SUBJECT_FORBIDDEN.test(s)) return fail(ctx, 'Invalid `subject` field. It must not contain control characters.');
        return s.replace(/[\r\n]+/g, ' ');
      }),
    html: text.meta({ example: '<p>It works!</p>' }),
    text: text.meta({ description: 'The plain-text part. Send `""` to opt out of the text derived from `html`.', example: 'It works!' }),
    headers: headersSchema,
    attachments: attachmentsSchema,
    tags: tagsSchema,
    scheduled_at: documentedAs(z.unknown().optional(), z.string()).meta({
      description:
        'Send later: ISO 8601 (`2026-08-05T11:52:01.858Z`; no zone means UTC) or natural language ' +
        `(\`in 1 min\`, \`in 2 hours\`, \`tomorrow at 9am\`), at most ${limits.maxScheduleDays} days ahead.`,
      example: 'in 1 hour',
    }),
  };
  if (context === 'email') return z.object(shape);
  // A batch email's attachments are refused before parsing (firstProblem); an empty or null list asks for none.
  const { attachments: _, ...batchShape } = shape;
  return z.object(batchShape);
}

/** What Resend reports before any field is parsed, in its order. */
function firstProblem(body: Record<string, unknown>, limits: SendLimits, context: SendContext): HeraldError | null {
  const unsupported = NOT_SUPPORTED.find((field) => !isAbsent(body[field]));
  if (unsupported) return invalid(`The \`${unsupported}\` field is not supported yet.`);
  const missing = REQUIRED.filter((field) => isAbsent(body[field]));
  if (missing.length > 0) return new HeraldError('missing_required_field', missingMessage(missing));
  // `text: ""` alone is no content: it exists only to opt out of the text derived from `html`.
  if (isBlank(body['html']) && isBlank(body['text'])) return new HeraldError('missing_required_field', 'Missing `html` or `text` field.');
  if (context === 'batch' && hasAttachments(body['attachments'])) {
    return invalid('Invalid `attachments` field. Attachments are not supported in batch emails.');
  }
  const countProblem = recipientCountProblem(body, limits.maxRecipients);
  return countProblem ? invalid(countProblem) : null;
}

const EXAMPLE = {
  from: 'Acme <onboarding@example.com>',
  to: ['delivered@example.com'],
  subject: 'Hello world',
  html: '<p>It works!</p>',
  text: 'It works!',
  headers: { 'X-Entity-Ref-ID': '123456789' },
  attachments: [{ filename: 'hello.txt', content: 'SGVsbG8sIHdvcmxkIQ==' }],
  tags: [{ name: 'category', value: 'confirm_email' }],
};

function build(limits: SendLimits, context: SendContext) {
  const mb = Math.round((limits.maxEmailBytes / (1024 * 1024)) * 10) / 10;
  const { attachments: _, ...batchExample } = EXAMPLE;
  const description =
    `One email. \`html\` or \`text\` (or both) is required. At most ${limits.maxRecipients} recipients across ` +
    `\`to\`, \`cc\` and \`bcc\`; the whole email, base64-encoded attachments included, at most ${mb} MB ` +
    `(${limits.maxEmailBytes} bytes). Unknown fields are ignored; \`template\` and \`topic_id\` are not supported yet.`;
  return jsonBody(
    checkedFirst(
      (body, ctx) => {
        const problem = firstProblem(body as Record<string, unknown>, limits, context);
        if (problem) fail(ctx, problem.message, problem.code);
      },
      fields(limits, context),
    ),
  ).meta(
    context === 'email'
      ? { description, example: EXAMPLE }
      : { description: `${description} Attachments are not supported in a batch.`, example: batchExample },
  );
}

const built = new WeakMap<SendLimits, Record<SendContext, ReturnType<typeof build>>>();

/** The schema of one email; built once per limits object (the services keep theirs). */
export function sendEmailSchema(limits: SendLimits, context: SendContext) {
  let schemas = built.get(limits);
  if (!schemas) built.set(limits, (schemas = { email: build(limits, 'email'), batch: build(limits, 'batch') }));
  return schemas[context];
}

/**
 * The envelope of POST /emails/batch: 1..maxBatchSize items. The validator passes `z.unknown()`
 * items (each email gets its own result, for the `x-batch-validation` modes); the document passes
 * the batch email schema.
 */
export function batchRequestSchema<S extends z.ZodType>(limits: SendLimits, item: S) {
  return checkedFirst((body, ctx) => {
    if (!Array.isArray(body)) fail(ctx, 'The request body must be an array of emails.');
    else if (body.length === 0) fail(ctx, 'The request body must contain at least one email.');
    else if (body.length > limits.maxBatchSize) {
      fail(ctx, `The request body must not contain more than ${limits.maxBatchSize} emails (it has ${body.length}).`);
    }
  }, z.array(item).min(1).max(limits.maxBatchSize)).meta({ description: `1 to ${limits.maxBatchSize} emails, without attachments.` });
}

function missingMessage(names: readonly string[]): string {
  const quoted = names.map((f) => `\`${f}\``);
  if (quoted.length === 1) return `Missing ${quoted[0]} field.`;
  return `Missing ${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]} fields.`;
}

const isBlank = (value: unknown): boolean => isAbsent(value) || value === '';

// An empty list asks for nothing, so batch clients that always send the key are not refused.
const hasAttachments = (value: unknown): boolean => (Array.isArray(value) ? value.length > 0 : !isAbsent(value));

const invalid = (message: string) => new HeraldError('validation_error', message);
