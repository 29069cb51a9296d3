import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { writeSimpleMessage, type SimpleMessage } from './simple-message';

const base: SimpleMessage = {
  from: 'Zoë Café <hello@acme.test>',
  to: ['jane@example.test', '"Doe, John" <john@example.test>'],
  cc: ['Ops <ops@bücher.test>'],
  replyTo: ['support@acme.test'],
  subject: 'Your résumé — confirmed ✓ with a subject long enough to need folding across more than one line',
  html: `<p>Hello <b>Zoë</b>, = signs and long lines ${'x'.repeat(120)}</p>\n<p>second</p>`,
  text: 'Hello Zoë,\nplain line\n',
  headers: [
    { key: 'X-Entity-Ref-ID', value: 'r-1' },
    { key: 'List-Unsubscribe', value: '<https://acme.test/u/1>' },
  ],
  messageId: '<0b8f1c1e-1111-4e6f-8b7a-1c2d3e4f5a6b@acme.test>',
  date: new Date('2026-11-26T01:02:03Z'),
};

const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => ({ name: v.name, address: v.address })));

/** What a reader sees: the same whichever writer made the bytes. */
const seen = (p: ParsedMail) => ({
  from: addresses(p.from),
  to: addresses(p.to),
  cc: addresses(p.cc),
  replyTo: addresses(p.replyTo),
  subject: p.subject,
  html: p.html,
  text: p.text?.replace(/\r\n/g, '\n'),
  messageId: p.messageId,
  date: p.date?.toISOString(),
  ref: p.headers.get('x-entity-ref-id'),
  unsubscribe: p.headers.get('list-unsubscribe'),
});

async function viaComposer(m: SimpleMessage): Promise<ParsedMail> {
  const raw = await new MailComposer({
    ...m,
    cc: m.cc ?? undefined,
    replyTo: m.replyTo ?? undefined,
    html: m.html ?? undefined,
    text: m.text ?? undefined,
  })
    .compile()
    .build();
  return simpleParser(raw);
}

describe('writeSimpleMessage', () => {
  it.each([
    ['html and text', base],
    ['html only', { ...base, text: null }],
    ['text only, ASCII', { ...base, html: null, text: 'plain\nascii\n', subject: 'Hi', from: 'hello@acme.test', cc: null }],
  ])('reads back like MailComposer’s message (%s)', async (_name, message) => {
    const ours = await simpleParser(writeSimpleMessage(message));
    expect(seen(ours)).toEqual(seen(await viaComposer(message)));
  });

  it('writes CRLF only, no line over 998 characters, no Bcc, and folds long headers with whitespace', () => {
    const raw = writeSimpleMessage(base).toString('utf8');
    expect(raw).not.toMatch(/[^\r]\n/);
    expect(raw.split('\r\n').every((line) => line.length <= 998)).toBe(true);
    expect(raw).not.toMatch(/^bcc:/im);
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    for (const line of head.split('\r\n')) expect(/^[\w-]+:/.test(line) || /^[ \t]/.test(line)).toBe(true);
  });
});
