import { byteaArrayParameter, jsonbArrayParameter, plainArray, textArrayParameter } from './binary-arrays';
import type { NewEmail } from './email-record.types';
import type { TemplateParts } from './email-template';

/**
 * The send path's insert statement for any number of emails: emails, recipients, attachments,
 * SMTP messages and dispatch-outbox rows, in one statement (atomic, one round trip).
 */
export function sendInsert(emails: NewEmail[], graceSeconds: number): { text: string; values: unknown[]; name: string | null } {
  const values = sendParameters(emails, graceSeconds);
  const more: string[] = [];
  const attachments = emails.flatMap(({ id, email }) =>
    email.attachments.map((a, position) => ({
      email_id: id,
      position,
      filename: a.filename,
      content_type: a.contentType,
      content_id: a.contentId,
      path: a.path,
      content: a.content?.toString('base64') ?? null,
      size: a.size,
    })),
  );
  if (attachments.length) {
    more.push(`attachments_in AS (
       INSERT INTO email_attachments (email_id, position, filename, content_type, content_id, path, content, size)
       SELECT email_id, position, filename, content_type, content_id, path, decode(content, 'base64'), size
       FROM jsonb_to_recordset($${values.push(JSON.stringify(attachments))}::jsonb) AS a(email_id uuid, position smallint,
         filename text, content_type text, content_id text, path text, content text, size integer)
       RETURNING email_id)`);
  }
  // The messages as one bytea[] parameter (binary, no encoding), so the statement's text is the
  // same however many there are; a message in parts is joined into its element.
  const inline = emails.filter(({ raw }) => raw && !raw.upload);
  if (inline.length) {
    const ids = `$${values.push(plainArray(inline.map(({ id }) => id)))}::uuid[]`;
    const mimes = `$${values.push(byteaArrayParameter(inline.map(({ raw }) => raw!.mime)))}::bytea[]`;
    more.push(`mime_in AS (INSERT INTO email_mime (email_id, mime) SELECT * FROM unnest(${ids}, ${mimes}) RETURNING email_id)`);
  }
  const bytea = (mime: Buffer | Buffer[]) =>
    Array.isArray(mime)
      ? mime.length
        ? mime.map((part) => `$${values.push(part)}::bytea`).join(' || ')
        : `''::bytea`
      : `$${values.push(mime)}::bytea`;
  // A large message: its header (and the start of its body) here, the rest from its stored chunks,
  // joined by Postgres. A chunk missing (Postgres restarted, the table being unlogged) leaves the
  // message NULL, which fails the statement rather than storing part of it.
  const uploaded = emails.flatMap(({ id, raw }) =>
    raw?.upload
      ? [`($${values.push(id)}::uuid, ${bytea(raw.mime)}, $${values.push(raw.upload.id)}::uuid, $${values.push(raw.upload.chunks)}::int)`]
      : [],
  );
  if (uploaded.length) {
    more.push(`uploaded AS (SELECT * FROM (VALUES ${uploaded.join(', ')}) AS v(email_id, head, upload_id, chunks))`);
    more.push(`mime_joined AS (
       INSERT INTO email_mime (email_id, mime)
       SELECT v.email_id, v.head || (SELECT CASE WHEN count(*) = v.chunks THEN coalesce(string_agg(c.data, ''::bytea ORDER BY c.seq), ''::bytea) END
                                       FROM email_mime_uploads c WHERE c.upload_id = v.upload_id)
       FROM uploaded v
       RETURNING email_id)`);
    more.push(`uploads_out AS (DELETE FROM email_mime_uploads WHERE upload_id IN (SELECT upload_id FROM uploaded) RETURNING upload_id)`);
  }
  const templates = new Map<string, { id: string; team_id: string; html: TemplateParts | null; text_body: TemplateParts | null }>();
  for (const { teamId, template } of emails) {
    if (template) templates.set(template.of.id, { id: template.of.id, team_id: teamId, html: template.of.html, text_body: template.of.text });
  }
  if (templates.size) {
    // Written by the first chunk that uses it; the same content under the same id after that.
    more.push(`templates_in AS (
       INSERT INTO email_templates (id, team_id, html, text_body)
       SELECT * FROM jsonb_to_recordset($${values.push(JSON.stringify([...templates.values()]))}::jsonb)
         AS t(id uuid, team_id uuid, html jsonb, text_body jsonb)
       ON CONFLICT (id) DO NOTHING
       RETURNING id)`);
  }
  // Named (prepared once per connection) unless a large message's parts are listed in the text.
  const name = uploaded.length ? null : `send_insert_${attachments.length ? 'a' : ''}${inline.length ? 'm' : ''}${templates.size ? 't' : ''}`;
  return { text: `${INSERT_SEND}${more.map((cte) => `, ${cte}`).join('')}\n${INSERT_RECIPIENTS}`, values, name };
}

/**
 * The send path's insert, as parallel arrays (unnest): Postgres reads them faster than a JSON
 * record set. The header address lists (to, cc, bcc, reply_to) are slices of one flat array
 * ($13), four [first, last] pairs per email in $14; $21 is the API key of each email, $22 its
 * broadcast (or NULL); $23 and $24 the bodies (html, text); $25 and $26 the template and
 * values of an email whose bodies are filled in when read (email-template.ts). The text and
 * jsonb arrays are sent in Postgres's binary format (binary-arrays.ts): no quoting, no parsing,
 * and one parameter for all the bodies (a parameter per body made planning the statement cost
 * tens of milliseconds for a broadcast's chunk of 1,000). The emails' dispatch-outbox rows ($20
 * the row of each email) list them, due after the grace period ($19) or at their scheduled time.
 */
const addressList = (k: number) => `($13::text[])[($14::int[])[o + ${2 * k + 1}]:($14::int[])[o + ${2 * k + 2}]]`;
const INSERT_SEND = `WITH input AS (
  SELECT x.*, (x.n::int - 1) * 8 AS o
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $23::text[], $24::text[],
                $7::jsonb[], $8::jsonb[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $20::uuid[], $21::uuid[], $22::uuid[],
                $25::uuid[], $26::jsonb[])
         WITH ORDINALITY AS x(id, team_id, region, source, from_address, subject, html, text_body, headers, tags,
                              message_id, last_event, scheduled_at, idempotency_key, dispatch_id, api_key_id, broadcast_id,
                              template_id, template_values, n)
), emails_in AS (
  INSERT INTO emails (id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to,
    subject, html, text_body, headers, tags, message_id, last_event, scheduled_at, idempotency_key, api_key_id, broadcast_id,
    template_id, template_values, created_at)
  SELECT id, team_id, region, source, from_address, ${addressList(0)}, nullif(${addressList(1)}, '{}'),
    nullif(${addressList(2)}, '{}'), nullif(${addressList(3)}, '{}'), subject, html, text_body, headers, tags,
    message_id, last_event, scheduled_at, idempotency_key, api_key_id, broadcast_id, template_id, template_values, clock_timestamp()
  FROM input
  RETURNING id
), outbox_in AS (
  INSERT INTO email_dispatches (id, region, due_at, email_ids)
  SELECT dispatch_id, region, coalesce(scheduled_at, now() + make_interval(secs => $19)), array_agg(id ORDER BY n)
  FROM input GROUP BY dispatch_id, region, scheduled_at
  RETURNING id
)`;

const INSERT_RECIPIENTS = `INSERT INTO email_recipients (email_id, position, kind, address)
SELECT * FROM unnest($15::uuid[], $16::smallint[], $17::text[], $18::text[])`;

/**
 * The parameters of INSERT_SEND and INSERT_RECIPIENTS: $1 to $18 as arrays, $19 (the grace
 * period), $20 (the outbox row of each email), $21 (the API key of each email), $22 (the
 * broadcast of each email), $23 (every html), $24 (every text), $25 and $26 (each email's
 * template and its values, or NULL). The uuid, integer and timestamp
 * arrays are literals joined here in one pass (node-postgres would build them element by
 * element); the text and jsonb ones are binary.
 */
function sendParameters(emails: NewEmail[], graceSeconds: number): unknown[] {
  const ids: string[] = [];
  const teams: string[] = [];
  const regions: string[] = [];
  const sources: string[] = [];
  const froms: string[] = [];
  const subjects: string[] = [];
  const headers: (string | null)[] = [];
  const tags: (string | null)[] = [];
  const messageIds: string[] = [];
  const lastEvents: string[] = [];
  const scheduled: (string | null)[] = [];
  const keys: (string | null)[] = [];
  const addresses: string[] = [];
  const bounds: number[] = [];
  const recipientEmails: string[] = [];
  const positions: number[] = [];
  const kinds: string[] = [];
  const recipientAddresses: string[] = [];
  const htmls: (string | null)[] = [];
  const texts: (string | null)[] = [];
  const dispatchIds: string[] = [];
  const apiKeyIds: string[] = [];
  const broadcastIds: string[] = [];
  const templateIds: string[] = [];
  const templateValues: (string | null)[] = [];
  for (const { id, teamId, region, source, apiKeyId, broadcastId, idempotencyKey, dispatchId, email, raw, template } of emails) {
    ids.push(id);
    templateIds.push(template?.of.id ?? 'NULL');
    templateValues.push(template ? JSON.stringify(template.values) : null);
    dispatchIds.push(dispatchId);
    apiKeyIds.push(apiKeyId ?? 'NULL');
    broadcastIds.push(broadcastId ?? 'NULL');
    teams.push(teamId);
    regions.push(region);
    sources.push(source);
    froms.push(email.from);
    subjects.push(email.subject);
    htmls.push(email.html);
    texts.push(email.text);
    headers.push(email.headers && JSON.stringify(email.headers));
    tags.push(email.tags && JSON.stringify(email.tags));
    messageIds.push(raw?.messageId ?? `<${id}@${email.fromDomain}>`);
    lastEvents.push(email.scheduledAt ? 'scheduled' : 'queued');
    scheduled.push(email.scheduledAt?.toISOString() ?? null);
    keys.push(idempotencyKey);
    for (const list of [email.to, email.cc, email.bcc, email.replyTo]) {
      bounds.push(addresses.length + 1, addresses.length + list.length);
      addresses.push(...list);
    }
    email.recipients.forEach((r, position) => {
      recipientEmails.push(id);
      positions.push(position);
      kinds.push(r.kind);
      recipientAddresses.push(r.address);
    });
  }
  return [
    ...[ids, teams].map(plainArray),
    ...[regions, sources, froms, subjects].map(textArrayParameter),
    ...[headers, tags].map(jsonbArrayParameter),
    ...[messageIds, lastEvents].map(textArrayParameter),
    textArray(scheduled),
    ...[keys, addresses].map(textArrayParameter),
    plainArray(bounds),
    plainArray(recipientEmails),
    plainArray(positions),
    ...[kinds, recipientAddresses].map(textArrayParameter),
    graceSeconds,
    plainArray(dispatchIds),
    plainArray(apiKeyIds),
    plainArray(broadcastIds),
    textArrayParameter(htmls),
    textArrayParameter(texts),
    plainArray(templateIds),
    jsonbArrayParameter(templateValues),
  ];
}

/** An array literal of strings (or NULLs), each quoted with `"` and `\\` escaped: the timestamps. */
const textArray = (values: (string | null)[]): string =>
  `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
