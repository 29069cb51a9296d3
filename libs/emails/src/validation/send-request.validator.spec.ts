import { validateSendRequest } from './send-request.validator';
import { errorOf, LIMITS, NOW, validEmail, valueOf } from './validation.fixture';

const send = (body: unknown) => validateSendRequest(body, LIMITS, NOW);
const FORMAT = 'The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.';

describe('validateSendRequest: body and required fields', () => {
  it.each([[undefined], [null], ['text'], [42], [[validEmail()]]])('rejects a body that is not an object (%j)', (body) => {
    expect(errorOf(send(body))).toEqual({ code: 'validation_error', message: 'The request body must be a JSON object.' });
  });

  it('lists every missing required field', () => {
    expect(errorOf(send(validEmail({ to: undefined })))).toEqual({ code: 'missing_required_field', message: 'Missing `to` field.' });
    expect(errorOf(send({ html: 'x' }))).toEqual({
      code: 'missing_required_field',
      message: 'Missing `from`, `to` and `subject` fields.',
    });
    expect(errorOf(send(validEmail({ from: null, subject: undefined })))?.message).toBe('Missing `from` and `subject` fields.');
  });

  it('requires content: html or text', () => {
    const expected = { code: 'missing_required_field', message: 'Missing `html` or `text` field.' };
    expect(errorOf(send(validEmail({ html: undefined })))).toEqual(expected);
    expect(errorOf(send(validEmail({ html: '', text: '' })))).toEqual(expected);
    expect(errorOf(send(validEmail({ html: null, text: '' })))).toEqual(expected);
    expect(valueOf(send(validEmail({ html: undefined, text: 'Hi' }))).text).toBe('Hi');
  });

  it('keeps `text: ""` next to html: it opts out of the derived plain-text part', () => {
    const email = valueOf(send(validEmail({ text: '' })));
    expect(email.text).toBe('');
    expect(email.html).toBe('<p>Hi</p>');
  });

  it('reads an empty html next to a text as no HTML part', () => {
    expect(valueOf(send(validEmail({ html: '', text: 'Hi' })))).toMatchObject({ html: null, text: 'Hi' });
  });

  it.each([
    ['template', { id: 'welcome' }],
    ['topic_id', 'b6d24b8e-af0b-4c3c-be0c-359bbd97381e'],
  ])('refuses `%s`, which Herald does not support yet', (field, value) => {
    expect(errorOf(send(validEmail({ [field]: value })))).toEqual({
      code: 'validation_error',
      message: `The \`${field}\` field is not supported yet.`,
    });
  });

  it('ignores unknown fields and null optional ones', () => {
    const email = valueOf(send(validEmail({ react: '<Email/>', region: 'eu-west-1', cc: null, tags: null, headers: null })));
    expect(email).toMatchObject({ cc: [], tags: null, headers: null, attachments: [], scheduledAt: null });
  });
});

describe('validateSendRequest: from', () => {
  it('normalizes the sender', () => {
    const email = valueOf(send(validEmail({ from: '  "Acme, Inc." <Hi@Acme.COM> ' })));
    expect(email).toMatchObject({ from: '"Acme, Inc." <Hi@Acme.COM>', fromAddress: 'Hi@Acme.COM', fromDomain: 'acme.com' });
    expect(valueOf(send(validEmail({ from: 'hi@bücher.de' }))).fromDomain).toBe('xn--bcher-kva.de');
  });

  it.each([['acme.com'], ['Acme <hi@acme>'], ['a@b.com, c@d.com'], ['']])('rejects %j as invalid_from_address', (from) => {
    expect(errorOf(send(validEmail({ from })))).toEqual({ code: 'invalid_from_address', message: `Invalid \`from\` field. ${FORMAT}` });
  });

  it('rejects a non-string sender', () => {
    expect(errorOf(send(validEmail({ from: ['hi@acme.com'] })))).toEqual({
      code: 'validation_error',
      message: 'The `from` field must be a `string`.',
    });
  });
});

describe('validateSendRequest: recipients', () => {
  it('accepts a string or an array and always returns arrays, as given', () => {
    const email = valueOf(
      send(validEmail({ to: ['Jane <jane@example.com>', ' bob@example.com '], cc: 'carl@example.com', reply_to: 'Help <help@acme.com>' })),
    );
    expect(email).toMatchObject({
      to: ['Jane <jane@example.com>', 'bob@example.com'],
      cc: ['carl@example.com'],
      bcc: [],
      replyTo: ['Help <help@acme.com>'],
    });
  });

  it.each(['to', 'cc', 'bcc', 'reply_to'])('rejects a bad address in `%s`, naming the field', (field) => {
    expect(errorOf(send(validEmail({ [field]: ['ok@example.com', 'not-an-address'] })))).toEqual({
      code: 'validation_error',
      message: `Invalid \`${field}\` field. ${FORMAT}`,
    });
  });

  it.each(['to', 'cc', 'bcc', 'reply_to'])('rejects a `%s` that is neither a string nor an array of strings', (field) => {
    for (const value of [42, { address: 'a@b.com' }, ['a@b.com', 7]]) {
      expect(errorOf(send(validEmail({ [field]: value })))).toEqual({
        code: 'validation_error',
        message: `The \`${field}\` field must be a \`string\` or an array of strings.`,
      });
    }
  });

  it('requires at least one `to` address', () => {
    expect(errorOf(send(validEmail({ to: [] })))).toEqual({
      code: 'validation_error',
      message: 'The `to` field must contain at least one email address.',
    });
  });

  it('limits recipients, naming the field and the limit', () => {
    const many = (n: number, prefix = 'u') => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
    expect(valueOf(send(validEmail({ to: many(50) }))).recipients).toHaveLength(50);
    expect(errorOf(send(validEmail({ to: many(51) })))).toEqual({
      code: 'validation_error',
      message: 'The `to` field must not contain more than 50 email addresses (it has 51).',
    });
    expect(errorOf(send(validEmail({ to: many(30), cc: many(10, 'c'), bcc: many(11, 'b') })))?.message).toBe(
      'The `to`, `cc` and `bcc` fields must not contain more than 50 email addresses in total (they have 51).',
    );
    expect(errorOf(send(validEmail({ reply_to: many(51) })))?.message).toBe(
      'The `reply_to` field must not contain more than 50 email addresses (it has 51).',
    );
  });

  it('counts a list before parsing it, so an oversized list is refused cheaply', () => {
    // Its entries are counted as they are read: an oversized list is refused on its length alone.
    let read = 0;
    const to = new Proxy(
      Array.from({ length: 1_000_000 }, () => 'not-an-address'),
      {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) read++;
          return Reflect.get(target, key, receiver);
        },
      },
    );
    const result = send(validEmail({ to }));
    expect(errorOf(result)?.message).toBe('The `to` field must not contain more than 50 email addresses (it has 1000000).');
    expect(read).toBe(0);
  });

  it('lists each recipient once, case-insensitively, first kind winning', () => {
    const email = valueOf(
      send(validEmail({ to: ['Jane <Jane@Example.com>', 'bob@example.com'], cc: ['jane@example.COM', 'carl@x.io'], bcc: 'BOB@example.com' })),
    );
    expect(email.recipients).toEqual([
      { kind: 'to', address: 'Jane@Example.com' },
      { kind: 'to', address: 'bob@example.com' },
      { kind: 'cc', address: 'carl@x.io' },
    ]);
  });
});

describe('validateSendRequest: subject, bodies, schedule', () => {
  it('accepts an empty subject and turns line breaks into spaces', () => {
    expect(valueOf(send(validEmail({ subject: '' }))).subject).toBe('');
    expect(valueOf(send(validEmail({ subject: 'Hello\r\nBcc: x@evil.com' }))).subject).toBe('Hello Bcc: x@evil.com');
    expect(valueOf(send(validEmail({ subject: 'Tab\there, and \u2028 is text' }))).subject).toBe('Tab\there, and \u2028 is text');
  });

  it.each(['\u000b', '\u001b', '\u007f', '\u0085'])('refuses a subject with the control character %j, naming the field', (control) => {
    expect(errorOf(send(validEmail({ subject: `Hello${control}Bcc: x@evil.com` })))).toMatchObject({
      code: 'validation_error',
      message: 'Invalid `subject` field. It must not contain control characters.',
    });
  });

  it.each([
    ['subject', 42],
    ['html', { a: 1 }],
    ['text', ['x']],
  ])('rejects a non-string `%s`', (field, value) => {
    expect(errorOf(send(validEmail({ [field]: value })))).toEqual({
      code: 'validation_error',
      message: `The \`${field}\` field must be a \`string\`.`,
    });
  });

  it('parses scheduled_at against the given clock', () => {
    expect(valueOf(send(validEmail({ scheduled_at: 'in 1 hour' }))).scheduledAt).toEqual(new Date('2026-08-05T11:00:00Z'));
    expect(errorOf(send(validEmail({ scheduled_at: 'in 31 days' })))).toEqual({
      code: 'validation_error',
      message: 'Invalid `scheduled_at` field. Emails can be scheduled at most 30 days in advance.',
    });
    expect(errorOf(send(validEmail({ scheduled_at: 12 })))?.message).toMatch(/^Invalid `scheduled_at` field\./);
  });

  it('reports the first problem in field order', () => {
    expect(errorOf(send(validEmail({ from: 'bad', to: 'bad', subject: 1 })))?.code).toBe('invalid_from_address');
    expect(errorOf(send(validEmail({ cc: 'bad', tags: 'bad' })))?.message).toMatch(/^Invalid `cc` field/);
  });
});

describe('validateSendRequest: size', () => {
  it('measures subject, bodies, headers and base64-encoded attachments', () => {
    const email = valueOf(
      send(
        validEmail({ subject: 'Hé', html: '<p>€</p>', text: 'x', headers: { 'X-A': 'b' }, attachments: [{ content: 'AAAA', filename: 'a.bin' }] }),
      ),
    );
    // 'Hé' 3 + '<p>€</p>' 10 + 'x' 1 + 'X-A: b\r\n' 8 + 3 bytes → 4 base64
    expect(email.sizeBytes).toBe(3 + 10 + 1 + 8 + 4);
  });

  it('refuses an email over the limit, naming the limit', () => {
    const limits = { ...LIMITS, maxEmailBytes: 1024 * 1024 };
    const content = Buffer.alloc(800 * 1024).toString('base64'); // 800 KiB → 1,092,268 base64 bytes, + 14 of subject and html
    const result = validateSendRequest(validEmail({ attachments: [{ content, filename: 'big.bin' }] }), limits, NOW);
    expect(errorOf(result)).toEqual({
      code: 'validation_error',
      message: 'The email must not be larger than 1 MB (1048576 bytes) including base64-encoded `attachments`; this one is 1092282 bytes.',
    });
    expect(validateSendRequest(validEmail({ html: 'x'.repeat(1024 * 1024) }), limits, NOW).ok).toBe(false);
  });
});
