import type { CreateEmailOptions } from 'resend';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { DatabaseProbe } from '../support/database-probe';

/*
 * Every validation rule of POST /emails and POST /emails/batch, driven over HTTP by the official
 * `resend` SDK, whose `error` is the server's error body verbatim. The unit specs beside the
 * validators pin the exact wording; here each rule must come back with the right status, error
 * name, and a message that names the field.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = { to: 'jane@example.com', subject: 'Hi', html: '<p>Hi</p>' };

/** The options of `emails.send`, loosened so that a case can send what a typed client would not. */
type Payload = Record<string, unknown>;

const addresses = (n: number, tag = 'r') => Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`);
/** An email from the team's own (verified) domain, patched. */
const email = (team: TestTeam, patch: Payload = {}): CreateEmailOptions =>
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

const REJECTED: Rejection[] = [
  ['without from', { from: undefined }, missing('Missing `from` field.')],
  ['without to', { to: undefined }, missing('Missing `to` field.')],
  ['without subject', { subject: undefined }, missing('Missing `subject` field.')],
  [
    'without from, to and subject',
    { from: undefined, to: undefined, subject: undefined },
    missing('Missing `from`, `to` and `subject` fields.'),
  ],
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
      [
        `with a bad address in a ${field} array`,
        { [key]: ['ok@example.com', 'Bob <bob@example>'] },
        invalid(`Invalid \`${field}\` field.`),
      ],
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

  [
    'with a header name holding a space',
    { headers: { 'X Ref': '1' } },
    invalid('Invalid `headers` field. `X Ref` is not a valid header name'),
  ],
  ['with a header name holding a colon', { headers: { 'X-Ref:': '1' } }, invalid('`X-Ref:` is not a valid header name')],
  [
    'with a CRLF injection in a header value',
    { headers: { 'X-Ref': 'a\r\nBcc: victim@example.com' } },
    invalid('Invalid `headers` field. The value of the `X-Ref` header must not contain line breaks'),
  ],
  ['with a bare LF in a header value', { headers: { 'X-Ref': 'a\nb' } }, invalid('The value of the `X-Ref` header')],
  [
    'overriding the From header',
    { headers: { From: 'ceo@bank.test' } },
    invalid('The `From` header is set by Herald; use the `from` field'),
  ],
  ['overriding the Bcc header', { headers: { bcc: 'spy@example.com' } }, invalid('The `bcc` header is set by Herald; use the `bcc` field')],
  ['overriding DKIM-Signature', { headers: { 'DKIM-Signature': 'v=1' } }, invalid('The `DKIM-Signature` header is set by Herald')],
  [
    'with a header value that is not a string',
    { headers: { 'X-Count': 1 } },
    invalid('The value of the `X-Count` header must be a `string`.'),
  ],

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
  [
    'with content of another shape',
    { attachments: [{ content: { data: [1] } }] },
    badAttachment('Invalid `attachments[0].content` field.'),
  ],
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

  [
    'with a tag name outside [A-Za-z0-9_-]',
    { tags: [{ name: 'has space', value: 'x' }] },
    invalid(`Invalid \`tags[0].name\` field. ${TAG_CHARSET}`),
  ],
  [
    'with a tag value outside [A-Za-z0-9_-]',
    { tags: [{ name: 'ok', value: 'é' }] },
    invalid(`Invalid \`tags[0].value\` field. ${TAG_CHARSET}`),
  ],
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

  [
    'scheduled in the past',
    { scheduledAt: new Date(Date.now() - HOUR).toISOString() },
    invalid(`${SCHEDULED} The date must be in the future.`),
  ],
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

describe('validation through the resend SDK', () => {
  let api: TestApi;
  let db: DatabaseProbe;
  let acme: TestTeam;
  /** Used only for refused requests, so that it must end up with no email at all. */
  let refused: TestTeam;
  /** A paid plan: the free plan's 100 recipients a day would end the batch tests early. */
  let bulk: TestTeam;

  beforeAll(async () => {
    api = await startTestApi();
    db = await DatabaseProbe.open(api.config);
    [acme, refused, bulk] = await Promise.all([api.team(), api.team(), api.team({ plan: 'pro-50k' })]);
  });
  afterAll(async () => {
    await db.close();
    await api.close();
  });

  describe('POST /emails refuses', () => {
    it.each(REJECTED)('an email %s', async (_label, patch, { statusCode, name, mentions }) => {
      const { data, error } = await refused.resend.emails.send(email(refused, patch));
      expect(data).toBeNull();
      expect(error).toEqual({ statusCode, name, message: expect.stringContaining(mentions) });
    });

    it('shapes the SDK cannot send: a body that is no object, attachments that are no list', async () => {
      expect(await call(api.url, refused.token, 'POST', '/emails', [email(refused)])).toMatchObject({
        status: 422,
        body: { statusCode: 422, name: 'validation_error', message: 'The request body must be a JSON object.' },
      });
      expect(await call(api.url, refused.token, 'POST', '/emails', { ...email(refused), attachments: { content: 'aGk=' } })).toMatchObject({
        status: 422,
        body: { statusCode: 422, name: 'validation_error', message: 'The `attachments` field must be an array of attachment objects.' },
      });
    });

    it('an email larger than 40 MB, in one real request', async () => {
      // 30 MiB + 3 bytes is 41,943,044 bytes of base64: just over 40 MiB. About 1 s end to end.
      const content = Buffer.alloc(30 * 1024 * 1024 + 3, 7).toString('base64');
      const { error } = await refused.resend.emails.send(email(refused, { attachments: [{ content, filename: 'big.bin' }] }));
      expect(error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: expect.stringContaining('The email must not be larger than 40 MB (41943040 bytes) including base64-encoded `attachments`'),
      });
    });

    it('and stores none of them', async () => {
      const { data } = await refused.resend.emails.list();
      expect(data!.data).toEqual([]);
    });
  });

  describe('POST /emails accepts', () => {
    it('to as a string or an array, and a named or quoted from, returning them as given', async () => {
      const named = `Acme <${acme.from('hello')}>`;
      const quoted = `"Acme, Inc." <${acme.from('hello')}>`;
      const one = await acme.resend.emails.send(email(acme, { from: named, to: 'jane@example.com' }));
      const many = await acme.resend.emails.send(
        email(acme, { from: quoted, to: ['jane@example.com', 'Bob <bob@example.com>'], cc: 'carl@example.com' }),
      );
      expect(one.error).toBeNull();
      expect(many.error).toBeNull();
      expect((await acme.resend.emails.get(one.data!.id)).data).toMatchObject({ from: named, to: ['jane@example.com'] });
      expect((await acme.resend.emails.get(many.data!.id)).data).toMatchObject({
        from: quoted,
        to: ['jane@example.com', 'Bob <bob@example.com>'],
        cc: ['carl@example.com'],
      });
    });

    it.each([
      ['in 1 hour', HOUR],
      ['in 2 days', 2 * DAY],
    ])('scheduled_at in natural language (%s)', async (scheduledAt, ahead) => {
      const before = Date.now();
      const sent = await acme.resend.emails.send(email(acme, { scheduledAt }));
      expect(sent.error).toBeNull();
      const { data } = await acme.resend.emails.get(sent.data!.id);
      expect(data!.last_event).toBe('scheduled');
      const at = new Date(data!.scheduled_at!.replace(' ', 'T').replace(/\+00$/, 'Z')).getTime();
      expect(at).toBeGreaterThanOrEqual(before + ahead - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + ahead + 1000);
    });

    it('attachments in every content form, stored byte for byte', async () => {
      const REPORT_URL = 'https://cdn.acme.test/files/report.pdf';
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7) % 256));
      const sent = await acme.resend.emails.send(
        email(acme, {
          attachments: [
            { filename: 'base64.bin', content: bytes.toString('base64') },
            { filename: 'array.bin', content: [...bytes] },
            { filename: 'buffer-json.bin', content: bytes.toJSON() },
            // resend@6 turns a real Buffer into base64 itself.
            { filename: 'logo.png', content: bytes, contentId: 'logo-1', contentType: 'image/png' },
            { filename: 'report.pdf', path: REPORT_URL },
          ],
        }),
      );
      expect(sent.error).toBeNull();
      expect(sent.data!.id).toMatch(UUID);
      const octets = { content_type: 'application/octet-stream', content_id: null, path: null, content: bytes, size: 512 };
      expect(await db.attachments(sent.data!.id)).toEqual([
        { position: 0, filename: 'base64.bin', ...octets },
        { position: 1, filename: 'array.bin', ...octets },
        { position: 2, filename: 'buffer-json.bin', ...octets },
        { position: 3, filename: 'logo.png', ...octets, content_type: 'image/png', content_id: 'logo-1' },
        { position: 4, filename: 'report.pdf', ...octets, content_type: 'application/pdf', path: REPORT_URL, content: null, size: 0 },
      ]);
    });
  });

  describe('POST /emails/batch', () => {
    it('refuses a body that is not an array, or an empty one', async () => {
      expect(await call(api.url, bulk.token, 'POST', '/emails/batch', email(bulk))).toMatchObject({
        status: 422,
        body: { statusCode: 422, name: 'validation_error', message: 'The request body must be an array of emails.' },
      });
      const empty = await bulk.resend.batch.send([]);
      expect(empty.error).toEqual({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('at least one email') });
    });

    it('refuses more than 100 emails', async () => {
      const { error } = await bulk.resend.batch.send(Array.from({ length: 101 }, () => email(bulk)));
      expect(error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'The request body must not contain more than 100 emails (it has 101).',
      });
      expect((await bulk.resend.batch.send(Array.from({ length: 100 }, () => email(bulk)))).data!.data).toHaveLength(100);
    });

    it('refuses attachments, naming the email, and lists it in permissive mode', async () => {
      const emails = [email(bulk), email(bulk, { attachments: [{ content: 'aGk=', filename: 'a.txt' }] })];
      const strict = await bulk.resend.batch.send(emails);
      expect(strict.error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'emails[1]: Invalid `attachments` field. Attachments are not supported in batch emails.',
      });
      const permissive = await bulk.resend.batch.send(emails, { batchValidation: 'permissive' });
      expect(permissive.error).toBeNull();
      expect(permissive.data).toEqual({
        data: [{ id: expect.stringMatching(UUID) }],
        errors: [{ index: 1, message: 'Invalid `attachments` field. Attachments are not supported in batch emails.' }],
      });
    });

    it('keeps the error name of an item in strict mode', async () => {
      const { error } = await bulk.resend.batch.send([email(bulk), email(bulk, { subject: undefined })]);
      expect(error).toEqual({ statusCode: 422, name: 'missing_required_field', message: 'emails[1]: Missing `subject` field.' });
      const from = await bulk.resend.batch.send([email(bulk, { from: 'nobody' })]);
      expect(from.error).toEqual({
        statusCode: 422,
        name: 'invalid_from_address',
        message: expect.stringContaining('emails[0]: Invalid `from` field.'),
      });
    });

    it('refuses an unknown x-batch-validation mode', async () => {
      const { error } = await bulk.resend.batch.send([email(bulk)], { batchValidation: 'lenient' as 'strict' });
      expect(error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'Invalid `x-batch-validation` header. It must be `strict` or `permissive`.',
      });
    });
  });
});

describe('the email size limit (MAX_EMAIL_BYTES=2048)', () => {
  let api: TestApi;
  let acme: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ MAX_EMAIL_BYTES: '2048' });
    acme = await api.team();
  });
  afterAll(() => api.close());

  // Counted: subject + html + text as UTF-8, custom headers, attachments as base64.
  // 1527 bytes travel as 2036 characters of base64; with `<p>x</p>` (8) that leaves 4 for the subject.
  const sized = (subject: string, attachments: { content: string }[]) =>
    email(acme, { subject, html: '<p>x</p>', attachments });
  const bytes = (n: number) => Buffer.alloc(n, 1).toString('base64');

  it('accepts an email of exactly the limit', async () => {
    const { error } = await acme.resend.emails.send(sized('Subj', [{ content: bytes(1527) }]));
    expect(error).toBeNull();
  });

  it('refuses one byte more, naming attachments and the limit', async () => {
    const { error } = await acme.resend.emails.send(sized('Subje', [{ content: bytes(1527) }]));
    expect(error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringMatching(/\(2048 bytes\) including base64-encoded `attachments`; this one is 2049 bytes\.$/),
    });
  });

  it('counts the attachments together', async () => {
    const half = { content: bytes(900) }; // 1200 base64 characters each: each fits alone, not both
    expect((await acme.resend.emails.send(sized('S', [half]))).error).toBeNull();
    const { error } = await acme.resend.emails.send(sized('S', [half, half]));
    expect(error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('2409 bytes') });
  });
});
