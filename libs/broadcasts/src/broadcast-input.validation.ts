import { z } from 'zod';
import { addressDomain, HeraldError, isUuid, parseAddress } from '@herald/core';
import { documentedAs, fail, invalidAddress, isAbsent, isPlainObject, jsonBody, mustBe, parseOrThrow, typeError } from '@herald/http';
import type { BroadcastContent } from './broadcast.types';

/*
 * The bodies of POST /broadcasts, PATCH /broadcasts/:id and POST /broadcasts/:id/send, with
 * Resend's field names and a 422 that names the field. `audience_id` is Resend's older name of
 * `segment_id`; `document` is the dashboard editor's JSON (Herald's), stored as given and rendered
 * to html and text when the broadcast is sent.
 */

const MAX_NAME = 256;
const MAX_SUBJECT = 998;
const MAX_PREVIEW = 500;
const MAX_REPLY_TO = 50;
const MAX_BODY_BYTES = 5 * 1024 * 1024;
const MAX_DOCUMENT_BYTES = 512 * 1024;

// Optional (a key may be absent) and null-as-absent; the outer optional() keeps the key out of JSON Schema's `required`.
const nullable = <S extends z.ZodType>(schema: S) => z.preprocess((v) => (v === null ? undefined : v), schema.optional()).optional();
const string = (field: string, max: number) =>
  nullable(
    z
      .string({ error: typeError('a `string`') })
      .refine((s) => Buffer.byteLength(s) <= max, { message: `The \`${field}\` field must be at most ${max} characters long.` }),
  );
const uuid = (field: string) =>
  nullable(
    z
      .string({ error: typeError('a `string`') })
      .transform((s, ctx) => (isUuid(s.trim()) ? s.trim().toLowerCase() : fail(ctx, `The \`${field}\` field must be a valid UUID.`))),
  );

const from = nullable(
  z.string({ error: typeError('a `string`') }).transform((value, ctx) => {
    const parsed = parseAddress(value);
    if (!parsed) return fail(ctx, invalidAddress('from'), 'invalid_from_address');
    return value.trim();
  }),
);

const replyTo = nullable(
  z.union([z.string(), z.array(z.string())], { error: mustBe('reply_to', 'a `string` or an array of strings') }).transform((value, ctx) => {
    const list = (typeof value === 'string' ? [value] : value).map((v) => v.trim());
    if (list.length > MAX_REPLY_TO) return fail(ctx, `The \`reply_to\` field must not contain more than ${MAX_REPLY_TO} email addresses.`);
    for (const entry of list) if (!parseAddress(entry)) return fail(ctx, invalidAddress('reply_to'));
    return list;
  }),
);

const document = nullable(
  documentedAs(
    z.unknown().transform((value, ctx) => {
      if (!isPlainObject(value)) return fail(ctx, mustBe('document', 'an object (the editor document)'));
      if (Buffer.byteLength(JSON.stringify(value)) > MAX_DOCUMENT_BYTES) {
        return fail(ctx, `The \`document\` field must be at most ${MAX_DOCUMENT_BYTES / 1024} KiB of JSON.`);
      }
      return value;
    }),
    z.record(z.string(), z.unknown()).meta({
      description: "Herald's: the dashboard editor's document (TipTap JSON), rendered to `html` and `text` when the broadcast is sent.",
    }),
  ),
);
const scheduledAt = nullable(
  documentedAs(z.unknown(), z.string()).meta({
    description: 'Send later: ISO 8601 or natural language (`in 1 hour`, `tomorrow at 9am`). Only with `send: true` (create).',
    example: 'in 1 hour',
  }),
);

const fields = z.object({
  name: string('name', MAX_NAME),
  segment_id: uuid('segment_id'),
  audience_id: uuid('audience_id'),
  topic_id: uuid('topic_id'),
  from,
  subject: string('subject', MAX_SUBJECT).transform((s) => s?.replace(/[\r\n]+/g, ' ')),
  reply_to: replyTo,
  preview_text: string('preview_text', MAX_PREVIEW),
  html: string('html', MAX_BODY_BYTES),
  text: string('text', MAX_BODY_BYTES),
  document,
  send: nullable(
    z.boolean({ error: typeError('a `boolean`') }).meta({ description: 'Send it now (or at `scheduled_at`) rather than keep a draft.' }),
  ),
  scheduled_at: scheduledAt,
});

const EXAMPLE = {
  name: 'June newsletter',
  segment_id: '78261eea-8f8b-4381-83c6-79fa7120f1cf',
  from: 'Acme <news@example.com>',
  subject: 'Hello {{{contact.first_name|there}}}',
  html: '<p>Hi {{{contact.first_name|there}}}, here is our news.</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
};

/*
 * The documented bodies (/openapi.json): the very schemas the validators below parse with. What
 * is required across fields (a segment, and one of html, text or document) is checked after the
 * parse, so it is stated here in words.
 */
export const createBroadcastBody = jsonBody(fields).meta({
  required: ['from', 'subject'],
  description: 'Also required: `segment_id` (or its older name `audience_id`), and one of `html`, `text` or `document`.',
  example: EXAMPLE,
});
export const updateBroadcastBody = jsonBody(fields.omit({ send: true, scheduled_at: true })).meta({
  description: 'A draft only; the fields given change, `null` clears an optional one.',
  example: { subject: 'Our June news, {{{contact.first_name|there}}}', preview_text: 'Three things we shipped' },
});
const sendFields = z.object({ scheduled_at: scheduledAt });
export const sendBroadcastBody = jsonBody(sendFields).meta({
  description: 'An empty body (or none) sends now.',
  example: { scheduled_at: 'in 1 hour' },
});

type Fields = z.output<typeof fields>;

/** A create request: the content, and whether (and when) to send it. */
export interface CreateBroadcastInput {
  content: BroadcastContent;
  send: boolean;
  /** As given; parsed by the service against the clock. */
  scheduledAt: unknown;
}

export function validateCreateBroadcast(body: unknown): CreateBroadcastInput {
  const f = parseOrThrow(createBroadcastBody, body);
  const segmentId = segmentOf(f);
  const missing = (['from', 'subject'] as const).filter((k) => isAbsent(f[k]));
  if (missing.length) throw new HeraldError('missing_required_field', `Missing \`${missing[0]}\` field.`);
  if (!segmentId) throw new HeraldError('missing_required_field', 'Missing `segment_id` field.');
  if (!hasBody(f)) throw new HeraldError('missing_required_field', 'Missing `html`, `text` or `document` field.');
  if (!isAbsent(f.scheduled_at) && f.send !== true) {
    throw new HeraldError('validation_error', 'The `scheduled_at` field can only be used with `send: true`.');
  }
  return {
    content: {
      name: f.name ?? null,
      segmentId,
      topicId: f.topic_id ?? null,
      from: f.from!,
      subject: f.subject!,
      replyTo: f.reply_to ?? null,
      previewText: f.preview_text ?? null,
      html: f.html ?? null,
      text: f.text ?? null,
      document: f.document ?? null,
    },
    send: f.send === true,
    scheduledAt: f.scheduled_at,
  };
}

/** An update of a draft: only the fields given change; `null` clears an optional one. */
export function validateUpdateBroadcast(body: unknown, current: BroadcastContent): BroadcastContent {
  const f = parseOrThrow(jsonBody(fields), body);
  const given = body as Record<string, unknown>;
  for (const field of ['send', 'scheduled_at'] as const) {
    if (!isAbsent(f[field])) throw new HeraldError('validation_error', `The \`${field}\` field cannot be updated; use POST /broadcasts/:id/send.`);
  }
  for (const field of ['from', 'subject'] as const) {
    if (field in given && isAbsent(given[field])) throw new HeraldError('validation_error', `The \`${field}\` field cannot be empty.`);
  }
  const pick = <K extends keyof BroadcastContent>(key: K, field: string, value: BroadcastContent[K] | undefined): BroadcastContent[K] =>
    field in given ? ((value ?? null) as BroadcastContent[K]) : current[key];
  const segmentGiven = 'segment_id' in given || 'audience_id' in given;
  const next: BroadcastContent = {
    name: pick('name', 'name', f.name),
    segmentId: segmentGiven ? segmentOf(f) : current.segmentId,
    topicId: pick('topicId', 'topic_id', f.topic_id),
    from: f.from ?? current.from,
    subject: f.subject ?? current.subject,
    replyTo: pick('replyTo', 'reply_to', f.reply_to),
    previewText: pick('previewText', 'preview_text', f.preview_text),
    html: pick('html', 'html', f.html),
    text: pick('text', 'text', f.text),
    document: pick('document', 'document', f.document),
  };
  if (!next.segmentId) throw new HeraldError('validation_error', 'The `segment_id` field cannot be empty.');
  if (next.html === null && next.text === null && next.document === null) {
    throw new HeraldError('validation_error', 'A broadcast needs one of `html`, `text` or `document`.');
  }
  return next;
}

/** POST /broadcasts/:id/send: `scheduled_at`, if any, as given. */
export function validateSendBroadcast(body: unknown): { scheduledAt: unknown } {
  if (isAbsent(body) || (isPlainObject(body) && Object.keys(body).length === 0)) return { scheduledAt: undefined };
  const f = parseOrThrow(sendBroadcastBody, body);
  return { scheduledAt: f.scheduled_at };
}

/** The dashboard's preview: a document, or html and text. */
export function validatePreview(body: unknown): Pick<BroadcastContent, 'html' | 'text' | 'document'> {
  const f = parseOrThrow(jsonBody(fields.pick({ html: true, text: true, document: true })), body);
  if (isAbsent(f.document) && isAbsent(f.html) && isAbsent(f.text)) {
    throw new HeraldError('missing_required_field', 'Missing `html`, `text` or `document` field.');
  }
  return { html: f.html ?? null, text: f.text ?? null, document: f.document ?? null };
}

/** The dashboard's test send: 1–5 addresses. */
export function validateTestRecipients(body: unknown): string[] {
  const f = parseOrThrow(
    jsonBody(
      z.object({
        to: z.union([z.string(), z.array(z.string())], { error: typeError('a `string` or an array of strings') }),
      }),
    ),
    body,
  );
  const list = (typeof f.to === 'string' ? [f.to] : f.to).map((v) => v.trim());
  if (list.length < 1 || list.length > 5) throw new HeraldError('validation_error', 'The `to` field must contain 1 to 5 email addresses.');
  return list.map((entry) => {
    const parsed = parseAddress(entry);
    if (!parsed) throw new HeraldError('validation_error', invalidAddress('to'));
    return parsed.address;
  });
}

/** The bare address and domain of a broadcast's `from` (validated already). */
export function fromParts(from: string): { address: string; domain: string } {
  const parsed = parseAddress(from);
  if (!parsed) throw new HeraldError('invalid_from_address', invalidAddress('from'));
  return { address: parsed.address, domain: addressDomain(parsed.address) };
}

function segmentOf(f: Fields): string | null {
  const segment = f.segment_id ?? null;
  const audience = f.audience_id ?? null;
  if (segment && audience && segment !== audience) {
    throw new HeraldError('validation_error', 'The `segment_id` and `audience_id` fields name different segments; give one.');
  }
  return segment ?? audience;
}

function hasBody(f: Fields): boolean {
  return (!isAbsent(f.html) && f.html !== '') || (!isAbsent(f.text) && f.text !== '') || !isAbsent(f.document);
}
