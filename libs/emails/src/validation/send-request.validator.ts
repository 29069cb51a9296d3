import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { attachmentsSchema } from './attachments.validator';
import { headersSchema } from './custom-headers.validator';
import { addressListSchema, fromSchema, recipientCountProblem, uniqueRecipients } from './recipients.validator';
import { parseScheduledAt } from './scheduled-at.parser';
import { tagsSchema } from './tags.validator';
import { accept, reject, type NormalizedEmail, type SendLimits, type Validated } from './validation.types';
import { isAbsent, isPlainObject, typeError } from '@herald/http';
import { fromZod } from './validated.zod';

/*
 * One email of POST /emails or POST /emails/batch, checked in the order a client fixes things:
 * body shape, unsupported features, missing fields, recipient counts (before parsing a list
 * that is too long anyway), each field's type and syntax in the order Resend's docs list them,
 * then the schedule and the total size.
 * Unknown fields are ignored, as Resend does (`react` is rendered by the Node SDK; `region` is
 * declared by its types but never sent).
 */

const REQUIRED = ['from', 'to', 'subject'] as const;
/** Accepted by Resend but not built yet; ignoring them would send something else than asked. */
const NOT_SUPPORTED = ['template', 'topic_id'] as const;

const text = z.string({ error: typeError('a `string`') }).nullish();

const fieldsSchema = z.object({
  from: fromSchema,
  to: addressListSchema('to'),
  cc: addressListSchema('cc'),
  bcc: addressListSchema('bcc'),
  reply_to: addressListSchema('reply_to'),
  // A line break would end the Subject header (injection). Folded into spaces rather than refused:
  // a pasted subject with a stray newline is otherwise harmless, and Resend documents no error.
  subject: z.string({ error: typeError('a `string`') }).transform((s) => s.replace(/[\r\n]+/g, ' ')),
  html: text,
  text,
  headers: headersSchema,
  attachments: attachmentsSchema,
  tags: tagsSchema,
  scheduled_at: z.unknown().optional(),
});

type Fields = z.output<typeof fieldsSchema>;

export function validateSendRequest(body: unknown, limits: SendLimits, now: Date = new Date()): Validated<NormalizedEmail> {
  return validateEmail(body, limits, now, 'email');
}

/** Shared with the batch validator, which forbids attachments per item. */
export function validateEmail(
  body: unknown,
  limits: SendLimits,
  now: Date,
  context: 'email' | 'batch',
): Validated<NormalizedEmail> {
  if (!isPlainObject(body)) return invalid('The request body must be a JSON object.');
  const unsupported = NOT_SUPPORTED.find((field) => !isAbsent(body[field]));
  if (unsupported) return invalid(`The \`${unsupported}\` field is not supported yet.`);
  const missing = REQUIRED.filter((field) => isAbsent(body[field]));
  if (missing.length > 0) return reject(new HeraldError('missing_required_field', missingMessage(missing)));
  // `text: ""` alone is no content: it exists only to opt out of the text derived from `html`.
  if (isBlank(body['html']) && isBlank(body['text'])) {
    return reject(new HeraldError('missing_required_field', 'Missing `html` or `text` field.'));
  }
  if (context === 'batch' && hasAttachments(body['attachments'])) {
    return invalid('Invalid `attachments` field. Attachments are not supported in batch emails.');
  }
  const countProblem = recipientCountProblem(body, limits.maxRecipients);
  if (countProblem) return invalid(countProblem);
  const fields = fromZod(fieldsSchema.safeParse(body));
  return fields.ok ? assemble(fields.value, limits, now) : fields;
}

function assemble(fields: Fields, limits: SendLimits, now: Date): Validated<NormalizedEmail> {
  const scheduled = isAbsent(fields.scheduled_at)
    ? accept(null)
    : parseScheduledAt(fields.scheduled_at, now, limits.maxScheduleDays);
  if (!scheduled.ok) return scheduled;
  const email: NormalizedEmail = {
    from: fields.from.given,
    fromAddress: fields.from.address,
    fromDomain: fields.from.domain,
    to: fields.to.given,
    cc: fields.cc.given,
    bcc: fields.bcc.given,
    replyTo: fields.reply_to.given,
    subject: fields.subject,
    // An empty `html` means no HTML part; an empty `text` keeps its meaning (no derived text).
    html: fields.html || null,
    text: fields.text ?? null,
    headers: fields.headers,
    attachments: fields.attachments,
    tags: fields.tags,
    scheduledAt: scheduled.value,
    recipients: uniqueRecipients(fields),
    sizeBytes: 0,
  };
  email.sizeBytes = messageSize(email);
  if (email.sizeBytes > limits.maxEmailBytes) {
    return invalid(
      `The email must not be larger than ${megabytes(limits.maxEmailBytes)} (${limits.maxEmailBytes} bytes) including ` +
        `base64-encoded \`attachments\`; this one is ${email.sizeBytes} bytes.`,
    );
  }
  return accept(email);
}

/** What counts toward Resend's 40 MB: texts as UTF-8, attachments as they travel (base64). */
function messageSize(email: NormalizedEmail): number {
  const texts = [email.subject, email.html ?? '', email.text ?? ''];
  const headers = Object.entries(email.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`);
  const textBytes = [...texts, ...headers].reduce((sum, s) => sum + Buffer.byteLength(s, 'utf8'), 0);
  return textBytes + email.attachments.reduce((sum, a) => sum + Math.ceil(a.size / 3) * 4, 0);
}

function missingMessage(fields: readonly string[]): string {
  const names = fields.map((f) => `\`${f}\``);
  if (names.length === 1) return `Missing ${names[0]} field.`;
  return `Missing ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} fields.`;
}

const megabytes = (bytes: number): string => {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB` : `${mb.toFixed(1)} MB`;
};

const isBlank = (value: unknown): boolean => isAbsent(value) || value === '';

// An empty list asks for nothing, so batch clients that always send the key are not refused.
const hasAttachments = (value: unknown): boolean => (Array.isArray(value) ? value.length > 0 : !isAbsent(value));

const invalid = (message: string): Validated<never> => reject(new HeraldError('validation_error', message));
