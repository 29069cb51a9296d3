import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { BodyDigest, boundaryOf } from './body-digest';
import { fieldValue, splitMessage } from './mime-headers';
import { decodeWords, headerText, relayHeaders } from './relay-headers';

const headersOf = (text: string, encoding: BufferEncoding = 'utf8') => relayHeaders(splitMessage(Buffer.from(text, encoding)).fields);

describe('relayHeaders: what the relay reads of a message (the header block only)', () => {
  it('reads From, To, Cc, Reply-To, Subject, Message-ID and Date across folded lines', () => {
    const h = headersOf(
      'From: "Acme, Inc." <hi@acme.test>\r\nTo: Alice <alice@example.com>,\r\n\tbob@example.com\r\nCc: carol@example.com\r\n' +
        'Reply-To: support@acme.test\r\nSubject: Hello\r\n  world\r\nMessage-ID:\r\n <id-1@acme.test>\r\nDate: Thu, 01 Jan 2026 00:00:00 +0000\r\n\r\nFrom: body@evil.test\r\n',
    );
    expect(h).toEqual({
      from: { name: 'Acme, Inc.', address: 'hi@acme.test' },
      to: [
        { name: 'Alice', address: 'alice@example.com' },
        { name: '', address: 'bob@example.com' },
      ],
      cc: [{ name: '', address: 'carol@example.com' }],
      replyTo: [{ name: '', address: 'support@acme.test' }],
      subject: 'Hello  world',
      messageIds: ['<id-1@acme.test>'],
      hasDate: true,
    });
  });

  it('decodes encoded words: B and Q, a character split across two words, whitespace between words dropped, unknown charsets left as written', () => {
    // "été ✓" in UTF-8, split inside the ✓ (e2 9c 93) across two B words
    expect(decodeWords('=?UTF-8?B?w6l0w6kg4pw=?= =?utf-8?B?kw==?=')).toBe('été ✓');
    expect(decodeWords('=?iso-8859-1?Q?caf=E9_cr=E8me?= and =?ISO-8859-1?q?=E0?=')).toBe('café crème and à');
    expect(decodeWords('=?utf-8*fr?Q?d=C3=A9j=C3=A0?=')).toBe('déjà');
    expect(decodeWords('=?x-unknown?Q?abc?= plain =? not a word ?=')).toBe('=?x-unknown?Q?abc?= plain =? not a word ?=');
    expect(decodeWords('=?shift_jis?B?k/qWe4zq?=')).toBe('日本語');
    const h = headersOf('From: =?utf-8?Q?J=C3=BCrgen?= <j@acme.test>\r\nSubject: =?utf-8?B?w6l0w6k=?=\r\n =?utf-8?B?IQ==?=\r\n\r\n');
    expect(h.from).toEqual({ name: 'Jürgen', address: 'j@acme.test' });
    expect(h.subject).toBe('été!');
  });

  it('has no From when it is missing, given twice, empty, a group of several or not an address', () => {
    expect(headersOf('To: a@example.com\r\n\r\nx').from).toBeNull();
    expect(headersOf('From: a@acme.test\r\nFrom: b@acme.test\r\n\r\nx').from).toBeNull();
    expect(headersOf('From:\r\n\r\nx').from).toBeNull();
    expect(headersOf('From: a@acme.test, b@acme.test\r\n\r\nx').from).toBeNull();
    expect(headersOf('From: not an address\r\n\r\nx').from).toBeNull();
    // An encoded word may not hide an address (RFC 2047 §5)
    expect(headersOf('From: =?utf-8?Q?ceo=40bank.test?= <x@acme.test>\r\n\r\nx').from).toEqual({ name: 'ceo@bank.test', address: 'x@acme.test' });
  });

  it('reads a field given twice as one list, groups flattened, invalid entries skipped; the first Subject', () => {
    const h = headersOf(
      'From: a@acme.test\r\nTo: one@example.com\r\nTo: Team: two@example.com, three@example.com;, broken@\r\nSubject: first\r\nSubject: second\r\n\r\n',
    );
    expect(h.to.map((m) => m.address)).toEqual(['one@example.com', 'two@example.com', 'three@example.com']);
    expect(h.subject).toBe('first');
    expect(h.messageIds).toEqual([]);
    expect(h.hasDate).toBe(false);
  });

  it('reads 8-bit headers as UTF-8 when they are, latin1 otherwise; LF-only messages too', () => {
    const utf8 = headersOf('From: Zoë <z@acme.test>\nSubject: Grüße ✓\n\nbody\n');
    expect(utf8.from).toEqual({ name: 'Zoë', address: 'z@acme.test' });
    expect(utf8.subject).toBe('Grüße ✓');
    expect(headersOf('From: z@acme.test\r\nSubject: caf\xe9\r\n\r\n', 'latin1').subject).toBe('café');
    expect(headerText('plain')).toBe('plain');
  });

  it('never reads past the header block', () => {
    const split = splitMessage(Buffer.from('From: a@acme.test\r\n\r\nTo: b@example.com\r\nSubject: in the body\r\n'));
    expect(split.fields.map((f) => f.name)).toEqual(['from']);
    expect(relayHeaders(split.fields)).toMatchObject({ to: [], subject: '' });
  });
});

describe('BodyDigest: the idempotency hash of a body', () => {
  const compose = (options: Mail.Options) => new MailComposer(options).compile().build();
  const digestOf = async (options: Mail.Options, chunk = Infinity) => {
    const split = splitMessage(await compose(options));
    const contentType = split.fields.find((f) => f.name === 'content-type');
    const digest = new BodyDigest(boundaryOf(contentType && fieldValue(contentType)));
    for (let i = 0; i < split.rest.length; i += chunk) digest.update(split.rest.subarray(i, i + chunk));
    return digest.digest().toString('hex');
  };
  const message: Mail.Options = {
    from: 'a@acme.test',
    to: 'b@example.com',
    subject: 'x',
    text: 'Hello',
    html: '<p>Hello</p>',
    attachments: [{ filename: 'r.txt', content: 'paid' }],
  };

  it('is the same for a message composed again (new nested boundaries), whatever the chunks', async () => {
    const first = await digestOf(message);
    expect(await digestOf(message)).toBe(first);
    expect(await digestOf(message, 7)).toBe(first);
    expect(await digestOf(message, 1)).toBe(first);
  });

  it('differs when a body, a part header or an attachment differs', async () => {
    const first = await digestOf(message);
    expect(await digestOf({ ...message, text: 'Hello!' })).not.toBe(first);
    expect(await digestOf({ ...message, attachments: [{ filename: 'r.txt', content: 'unpaid' }] })).not.toBe(first);
    expect(await digestOf({ ...message, attachments: [{ filename: 's.txt', content: 'paid' }] })).not.toBe(first);
  });

  it('reads the boundary of a multipart Content-Type only', () => {
    expect(boundaryOf('multipart/mixed; boundary="--_b 1"')).toBe('--_b 1');
    expect(boundaryOf('Multipart/Alternative;\r\n boundary=abc; charset=x')).toBe('abc');
    expect(boundaryOf('text/plain; boundary=abc')).toBeNull();
    expect(boundaryOf(undefined)).toBeNull();
  });
});
