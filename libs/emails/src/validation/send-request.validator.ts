import { z } from 'zod';
import { HeraldError, heraldClock } from '@herald/core';
import { uniqueRecipients } from './recipients.validator';
import { parseScheduledAt } from './scheduled-at.parser';
import { sendEmailSchema, type SendContext } from './send-request.schema';
import { accept, reject, type NormalizedAttachment, type NormalizedEmail, type SendLimits, type Validated } from './validation.types';
import { isAbsent } from '@herald/http';
import { fromZod } from './validated.zod';

/*
 * One email of POST /emails or POST /emails/batch: the fields as sendEmailSchema parses them
 * (./send-request.schema, which /openapi.json is generated from), then the schedule and the total
 * size, which depend on the clock and on every field at once.
 */

type Fields = z.output<ReturnType<typeof sendEmailSchema>>;

export function validateSendRequest(body: unknown, limits: SendLimits, now: Date = heraldClock.now()): Validated<NormalizedEmail> {
  return validateEmail(body, limits, now, 'email');
}

/** Shared with the batch validator, which forbids attachments per item. */
export function validateEmail(body: unknown, limits: SendLimits, now: Date, context: SendContext): Validated<NormalizedEmail> {
  const fields = fromZod(sendEmailSchema(limits, context).safeParse(body));
  return fields.ok ? assemble(fields.value, limits, now) : fields;
}

function assemble(fields: Fields, limits: SendLimits, now: Date): Validated<NormalizedEmail> {
  const scheduled = isAbsent(fields.scheduled_at) ? accept(null) : parseScheduledAt(fields.scheduled_at, now, limits.maxScheduleDays);
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
    // A batch email has none: its schema has no `attachments` field.
    attachments: (fields as { attachments?: NormalizedAttachment[] }).attachments ?? [],
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

const megabytes = (bytes: number): string => {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB` : `${mb.toFixed(1)} MB`;
};

const invalid = (message: string): Validated<never> => reject(new HeraldError('validation_error', message));
