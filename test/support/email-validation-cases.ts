import type { CreateEmailOptions } from 'resend';
import type { TestTeam } from './api-harness';

/*
 * The emails of the validation suites (test/api/validation and batch-validation): an email from a
 * team's verified domain, patched, and every way POST /emails refuses one, with the error body
 * expected back.
 */

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
const BASE = { to: 'jane@example.com', subject: 'Hi', html: '<p>Hi</p>' };

/** The options of `emails.send`, loosened so that a case can send what a typed client would not. */
export type Payload = Record<string, unknown>;

const addresses = (n: number, tag = 'r') => Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`);
/** An email from the team's own (verified) domain, patched. */
export const email = (team: TestTeam, patch: Payload = {}): CreateEmailOptions =>
  ({ from: `Acme <${team.from('hello')}>`, ...BASE, ...patch }) as unknown as CreateEmailOptions;

/** The error body expected back: status and name exactly, and a message containing `mentions`. */
interface Refusal {
  statusCode: number;
  name: string;
  mentions: string;
}
type Rejection = [label: string, patch: Payload, expected: Refusal];

const missing = (mentions: string): Refusal => ({ statusCode: 422, name: 'missing_required_field', mentions });
const invalid = (mentions: string): Refusal => ({ statusCode: 422, name: 'validation_error', mentions });
const badFrom = (mentions: string): Refusal => ({ statusCode: 422, name: 'invalid_from_address', mentions });
const badAttachment = (mentions: string): Refusal => ({ statusCode: 422, name: 'invalid_attachment', mentions });

const FORMAT = 'The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.';
const NEED_CONTENT = 'Attachment must have either a `content` or `path`';
const TAG_CHARSET = 'Tags should only contain ASCII letters, numbers, underscores, or dashes.';
const SCHEDULED = 'Invalid `scheduled_at` field.';

/** Every way POST /emails refuses an email: label, patch, expected error. */
export const REJECTED: Rejection[] = [
  ['without from', { from: undefined }, missing('Missing `from` field.')],
  ['without to', { to: undefined }, missing('Missing `to` field.')],
  ['without subject', { subject: undefined }, missing('Missing `subject` field.')],
  ['without from, to and subject', { from: undefined, to: undefined, subject: undefined }, missing('Missing `from`, `to` and `subject` fields.')],
  ['without html and text', { html: undefined }, missing('Missing `html` or `text` field.')],
  ['with an empty html and text', { html: '', text: '' }, missing('Missing `html` or `text` field.')],
  ['with a subject that is not a string', { subject: 42 }, invalid('The `subject` field must be a `string`.')],

  ['from a bare address without a domain', { from: 'hello@acme' }, badFrom(`Invalid \`from\` field. ${FORMAT}`)],
  ['from a named address with a bad address', { from: 'Acme <hello@@acme.test>' }, badFrom(`Invalid \`from\` field. ${FORMAT}`)],
  ['from a name without angle brackets', { from: 'Acme hello@acme.test' }, badFrom('Invalid `from` field.')],
  ['from two addresses', { from: 'a@acme.test, b@acme.test' }, badFrom('Invalid `from` field.')],

  ...(['to', 'cc', 'bcc', 'reply_to'] as const).flatMap((field): Rejection[] => {
    const key = field === 'reply_to' ? 'replyTo' : field;
    return [
      [`with a bad ${field} string`, { [key]: 'not-an-address' }, invalid(`Invalid \`${field}\` field. ${FORMAT}`)],
      [`with a bad address in a ${field} array`, { [key]: ['ok@example.com', 'Bob <bob@example>'] }, invalid(`Invalid \`${field}\` field.`)],
    ];
  }),
  ['with to as a number', { to: 7 }, invalid('The `to` field must be a `string` or an array of strings.')],
  ['with an empty to list', { to: [] }, invalid('The `to` field must contain at least one email address.')],
  ['with 51 to', { to: addresses(51) }, invalid('The `to` field must not contain more than 50 email addresses (it has 51).')],
  [
    'with 51 to + cc + bcc',
    { to: addresses(20, 't'), cc: addresses(20, 'c'), bcc: addresses(11, 'b') },
    invalid('The `to`, `cc` and `bcc` fields must not contain more than 50 email addresses in total (they have 51).'),
  ],
  ['with 51 reply_to', { replyTo: addresses(51) }, invalid('The `reply_to` field must not contain more than 50 email addresses')],

  ['with a header name holding a space', { headers: { 'X Ref': '1' } }, invalid('Invalid `headers` field. `X Ref` is not a valid header name')],
  ['with a header name holding a colon', { headers: { 'X-Ref:': '1' } }, invalid('`X-Ref:` is not a valid header name')],
  [
    'with a CRLF injection in a header value',
    { headers: { 'X-Ref': 'a\r\nBcc: victim@example.com' } },
    invalid('Invalid `headers` field. The value of the `X-Ref` header must not contain line breaks'),
  ],
  ['with a bare LF in a header value', { headers: { 'X-Ref': 'a\nb' } }, invalid('The value of the `X-Ref` header')],
  ['overriding the From header', { headers: { From: 'ceo@bank.test' } }, invalid('The `From` header is set by Herald; use the `from` field')],
  ['overriding the Bcc header', { headers: { bcc: 'spy@example.com' } }, invalid('The `bcc` header is set by Herald; use the `bcc` field')],
  ['overriding DKIM-Signature', { headers: { 'DKIM-Signature': 'v=1' } }, invalid('The `DKIM-Signature` header is set by Herald')],
  ['with a header value that is not a string', { headers: { 'X-Count': 1 } }, invalid('The value of the `X-Count` header must be a `string`.')],

  [
    'with an attachment without content or path',
    { attachments: [{ filename: 'a.pdf' }] },
    badAttachment(`Invalid \`attachments[0]\` field. ${NEED_CONTENT}.`),
  ],
  [
    'with an attachment with both content and path',
    { attachments: [{ content: 'aGk=', path: 'https://cdn.acme.test/a.pdf' }] },
    badAttachment(`Invalid \`attachments[0]\` field. ${NEED_CONTENT}, not both.`),
  ],
  [
    'with a second attachment that is empty',
    { attachments: [{ content: 'aGk=' }, { content: '' }] },
    badAttachment('Invalid `attachments[1]` field.'),
  ],
  [
    'with attachment content that is not base64',
    { attachments: [{ content: 'not base64!', filename: 'a.txt' }] },
    badAttachment('Invalid `attachments[0].content` field. The content is not valid base64.'),
  ],
  [
    'with a data: URL as content',
    { attachments: [{ content: 'data:text/plain;base64,aGk=' }] },
    badAttachment('Invalid `attachments[0].content` field.'),
  ],
  [
    'with a byte array item above 255',
    { attachments: [{ content: [104, 256], filename: 'a.bin' }] },
    badAttachment('Invalid `attachments[0].content` field. Bytes must be integers from 0 to 255; item 1 is not.'),
  ],
  [
    'with a serialized Buffer holding a negative byte',
    { attachments: [{ content: { type: 'Buffer', data: [-1] } }] },
    badAttachment('Invalid `attachments[0].content` field. Bytes must be integers from 0 to 255; item 0 is not.'),
  ],
  ['with content of another shape', { attachments: [{ content: { data: [1] } }] }, badAttachment('Invalid `attachments[0].content` field.')],
  [
    'with an ftp path',
    { attachments: [{ path: 'ftp://files.acme.test/a.pdf' }] },
    badAttachment('Invalid `attachments[0].path` field. It must be an http'),
  ],
  ['with a file path', { attachments: [{ path: '/etc/passwd' }] }, badAttachment('Invalid `attachments[0].path` field.')],
  [
    'with a 128-character content_id',
    { attachments: [{ content: 'aGk=', contentId: 'x'.repeat(128) }] },
    badAttachment('Invalid `attachments[0].content_id` field. It must be less than 128 characters.'),
  ],
  [
    'with a content_type that is no MIME type',
    { attachments: [{ content: 'aGk=', contentType: 'pdf' }] },
    badAttachment('`attachments[0].content_type`'),
  ],

  ['with a tag name outside [A-Za-z0-9_-]', { tags: [{ name: 'has space', value: 'x' }] }, invalid(`Invalid \`tags[0].name\` field. ${TAG_CHARSET}`)],
  ['with a tag value outside [A-Za-z0-9_-]', { tags: [{ name: 'ok', value: 'é' }] }, invalid(`Invalid \`tags[0].value\` field. ${TAG_CHARSET}`)],
  [
    'with a 257-character tag value',
    { tags: [{ name: 'n', value: 'v'.repeat(257) }] },
    invalid('Invalid `tags[0].value` field. Tags must be at most 256'),
  ],
  [
    'with a 257-character tag name',
    { tags: [{ name: 'n'.repeat(257), value: 'v' }] },
    invalid('Invalid `tags[0].name` field. Tags must be at most 256'),
  ],
  [
    'with 76 tags',
    { tags: Array.from({ length: 76 }, (_, i) => ({ name: `t${i}`, value: 'v' })) },
    invalid('The `tags` field must not contain more than 75 tags.'),
  ],
  ['with a tag without value', { tags: [{ name: 'category' }] }, invalid('The `tags[0].value` field is required.')],
  ['with a tag without name', { tags: [{ value: 'x' }] }, invalid('The `tags[0].name` field is required.')],

  ['scheduled in the past', { scheduledAt: new Date(Date.now() - HOUR).toISOString() }, invalid(`${SCHEDULED} The date must be in the future.`)],
  [
    'scheduled more than 30 days ahead',
    { scheduledAt: new Date(Date.now() + 31 * DAY).toISOString() },
    invalid(`${SCHEDULED} Emails can be scheduled at most 30 days in advance.`),
  ],
  ['scheduled at garbage', { scheduledAt: 'when pigs fly' }, invalid(`${SCHEDULED} Use an ISO 8601 date`)],
  ['scheduled on a day that does not exist', { scheduledAt: '2030-02-30T10:00:00Z' }, invalid(SCHEDULED)],

  ['with a template', { template: { id: 'welcome' } }, invalid('The `template` field is not supported yet.')],
  ['with a topic_id', { topicId: 'b6d24b8e-af0b-4c3c-be0c-359bbd97381e' }, invalid('The `topic_id` field is not supported yet.')],
];
