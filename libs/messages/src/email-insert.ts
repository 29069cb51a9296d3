import type { NewEmail } from './email-record.types';

/**
 * The send path's insert statement for any number of emails: emails, recipients, attachments,
 * SMTP messages and dispatch-outbox rows, in one statement (atomic, one round trip).
 */
export function sendInsert(emails: NewEmail[], graceSeconds: number): { text: string; values: unknown[] } {
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
  // Each MIME (or part of one) is its own parameter: node-postgres sends a Buffer as binary, with no encoding.
  const bytea = (mime: Buffer | Buffer[]) =>
    Array.isArray(mime)
      ? mime.length
        ? mime.map((part) => `$${values.push(part)}::bytea`).join(' || ')
        : `''::bytea`
      : `$${values.push(mime)}::bytea`;
  const mimes = emails.flatMap(({ id, raw }) => (raw ? [`($${values.push(id)}::uuid, ${bytea(raw.mime)})`] : []));
  if (mimes.length) more.push(`mime_in AS (INSERT INTO email_mime (email_id, mime) VALUES ${mimes.join(', ')} RETURNING email_id)`);
  return { text: `${insertSendSql(emails.length)}${more.map((cte) => `, ${cte}`).join('')}\n${INSERT_RECIPIENTS}`, values };
}

/**
 * The send path's insert, as parallel arrays (unnest): Postgres reads them faster than a JSON
 * record set. The header address lists (to, cc, bcc, reply_to) are slices of one flat array
 * ($13), four [first, last] pairs per email in $14; $21 is the API key of each email, $22 its
 * broadcast (or NULL). The bodies (html, text) are one parameter each, from $23 on: node-postgres writes a parameter as it is, where an array element of a
 * kilobyte of HTML would be escaped and copied twice. The emails' dispatch-outbox rows ($20 the
 * row of each email) list them, due after the grace period ($19) or at their scheduled time.
 */
function insertSendSql(count: number): string {
  const addressList = (k: number) => `($13::text[])[($14::int[])[o + ${2 * k + 1}]:($14::int[])[o + ${2 * k + 2}]]`;
  const bodies = (first: number) => `ARRAY[${Array.from({ length: count }, (_, i) => `$${first + i}::text`).join(', ')}]`;
  return `WITH input AS (
  SELECT x.*, (x.n::int - 1) * 8 AS o
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], ${bodies(23)}, ${bodies(23 + count)},
                $7::jsonb[], $8::jsonb[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $20::uuid[], $21::uuid[], $22::uuid[])
         WITH ORDINALITY AS x(id, team_id, region, source, from_address, subject, html, text_body, headers, tags,
                              message_id, last_event, scheduled_at, idempotency_key, dispatch_id, api_key_id, broadcast_id, n)
), emails_in AS (
  INSERT INTO emails (id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to,
    subject, html, text_body, headers, tags, message_id, last_event, scheduled_at, idempotency_key, api_key_id, broadcast_id, created_at)
  SELECT id, team_id, region, source, from_address, ${addressList(0)}, nullif(${addressList(1)}, '{}'),
    nullif(${addressList(2)}, '{}'), nullif(${addressList(3)}, '{}'), subject, html, text_body, headers, tags,
    message_id, last_event, scheduled_at, idempotency_key, api_key_id, broadcast_id, clock_timestamp()
  FROM input
  RETURNING id
), outbox_in AS (
  INSERT INTO email_dispatches (id, region, due_at, email_ids)
  SELECT dispatch_id, region, coalesce(scheduled_at, now() + make_interval(secs => $19)), array_agg(id ORDER BY n)
  FROM input GROUP BY dispatch_id, region, scheduled_at
  RETURNING id
)`;
}

const INSERT_RECIPIENTS = `INSERT INTO email_recipients (email_id, position, kind, address)
SELECT * FROM unnest($15::uuid[], $16::smallint[], $17::text[], $18::text[])`;

/**
 * The parameters of insertSendSql and INSERT_RECIPIENTS: $1 to $18 as array literals, $19 (the
 * grace period), $20 (the outbox row of each email), $21 (the API key of each email), $22 (the
 * broadcast of each email), then every
 * html and every text. The literals are joined here in one pass; node-postgres would build
 * them element by element, escaping and concatenating each (several % of the API's CPU).
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
  for (const { id, teamId, region, source, apiKeyId, broadcastId, idempotencyKey, dispatchId, email, raw } of emails) {
    ids.push(id);
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
    ...[regions, sources, froms, subjects, headers, tags, messageIds, lastEvents, scheduled, keys, addresses].map(textArray),
    plainArray(bounds),
    plainArray(recipientEmails),
    plainArray(positions),
    ...[kinds, recipientAddresses].map(textArray),
    graceSeconds,
    plainArray(dispatchIds),
    plainArray(apiKeyIds),
    plainArray(broadcastIds),
    ...htmls,
    ...texts,
  ];
}

/** An array literal of values that need no quoting (UUIDs, integers, NULL). */
const plainArray = (values: (string | number)[]): string => `{${values.join(',')}}`;

/** An array literal of strings (or NULLs), each quoted with `"` and `\\` escaped. */
const textArray = (values: (string | null)[]): string =>
  `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
