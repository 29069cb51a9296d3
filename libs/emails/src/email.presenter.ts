import { z } from 'zod';
import { restTimestamp } from '@herald/core';
import { wireId, wireList, wireReference, wireTimestamp } from '@herald/http';
import { EmailEvent, EmailRecord, EmailSummary } from './email.types';
import { tagSchema } from './validation/tags.validator';

/* Resend's wire shapes for emails: each presenter answers the zod schema beside it, from which /openapi.json is generated. */

/** Every value of an email's `last_event` (the feed's filter accepts these). */
export const LAST_EVENTS = [
  'queued',
  'scheduled',
  'canceled',
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'failed',
  'suppressed',
] as const satisfies readonly EmailEvent[];
// presentEmailSummary assigns an EmailEvent to `last_event`: a new event fails to compile until it is listed here.

const addresses = z.array(z.string()).meta({ example: ['jane@example.com'] });

export const emailSummarySchema = z.object({
  id: wireId,
  to: addresses,
  from: z.string().meta({ example: 'Acme <onboarding@example.com>' }),
  created_at: wireTimestamp,
  subject: z.string().meta({ example: 'Hello world' }),
  bcc: addresses.nullable(),
  cc: addresses.nullable(),
  reply_to: addresses.nullable(),
  last_event: z.enum(LAST_EVENTS).meta({ example: 'delivered' }),
  scheduled_at: wireTimestamp.nullable().meta({ description: 'When a scheduled email is (or was) due; null when sent right away.' }),
  message_id: z.string().meta({
    description: 'The `Message-ID` header of the email.',
    example: '<4ef9a417-02e9-4d39-ad75-9611e0fcc33c@example.com>',
  }),
});

export const emailSchema = z.object({
  object: z.literal('email'),
  ...emailSummarySchema.shape,
  html: z.string().nullable(),
  text: z.string().nullable(),
  tags: z.array(tagSchema),
  headers: z.record(z.string(), z.string()).nullable(),
  topic_id: z.null().meta({ description: 'Always null: topics are not supported yet.' }),
});

export const emailListSchema = wireList(emailSummarySchema);
export const emailReferenceSchema = wireReference('email');

/** POST /emails (and one item of a batch's `data`). */
export const sendResponseSchema = z.object({ id: wireId });

/** POST /emails/batch. */
export const batchResponseSchema = z.object({
  data: z.array(sendResponseSchema).meta({
    description: 'Strict mode: one id per email, in input order. Permissive mode: the accepted emails only, in input order.',
  }),
  errors: z
    .array(z.object({ index: z.int().min(0), message: z.string() }))
    .optional()
    .meta({ description: 'Permissive mode only: the rejected emails, by index in the request.' }),
});

export type EmailSummaryBody = z.infer<typeof emailSummarySchema>;
export type EmailBody = z.infer<typeof emailSchema>;
export type EmailList = z.infer<typeof emailListSchema>;
export type EmailReference = z.infer<typeof emailReferenceSchema>;
export type SendResponse = z.infer<typeof sendResponseSchema>;
export type BatchResponse = z.infer<typeof batchResponseSchema>;

export function presentEmailSummary(email: EmailSummary): EmailSummaryBody {
  return {
    id: email.id,
    to: email.to,
    from: email.from,
    created_at: restTimestamp(email.createdAt),
    subject: email.subject,
    bcc: email.bcc,
    cc: email.cc,
    reply_to: email.replyTo,
    last_event: email.lastEvent,
    scheduled_at: restTimestamp(email.scheduledAt),
    message_id: email.messageId,
  };
}

export function presentEmail(email: EmailRecord): EmailBody {
  return {
    object: 'email',
    ...presentEmailSummary(email),
    html: email.html,
    text: email.text,
    tags: email.tags ?? [],
    headers: email.headers,
    topic_id: null,
  };
}

export const presentEmailList = (page: { items: EmailSummary[]; hasMore: boolean }): EmailList => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map(presentEmailSummary),
});

export const presentEmailReference = (id: string): EmailReference => ({ object: 'email', id });
