import { simpleParser } from 'mailparser';
import { field, writeHeaders, type MessageHeaders } from './header-writer';

/**
 * What a reader makes of a field's value: unfolded (RFC 5322 §2.2.3), encoded words decoded
 * (RFC 2047 §6). mailparser decodes the Subject field, so any value is read back as one.
 */
const decoded = async (value: string): Promise<string> => (await simpleParser(`Subject: ${value}\r\n\r\n`)).subject ?? '';
const readBack = (folded: string): Promise<string> => decoded(folded.slice(folded.indexOf(':') + 2));
const lines = (folded: string): string[] => folded.split('\r\n');
const longest = (folded: string): number => Math.max(...lines(folded).map((l) => Buffer.byteLength(l)));
/** Every line after the first starts with whitespace: a fold, not a new field. */
const foldsOnly = (folded: string): boolean =>
  lines(folded)
    .slice(1)
    .every((l) => /^[ \t]/.test(l));

const SUBJECT_PLAIN_MAX = 77;

describe('field', () => {
  it('writes a 10,000-character one-word subject as encoded words on lines of at most 78, and it reads back exactly', async () => {
    const subject = 'x'.repeat(10_000);
    const folded = field('Subject', subject, SUBJECT_PLAIN_MAX);
    expect(longest(folded)).toBeLessThanOrEqual(78);
    expect(foldsOnly(folded)).toBe(true);
    expect(await readBack(folded)).toBe(subject);
    // RFC 2047 §2: no encoded word is longer than 75 characters
    expect(
      Math.max(
        ...folded
          .split(/\s+/)
          .slice(1)
          .map((w) => w.length),
      ),
    ).toBeLessThanOrEqual(75);
  });

  it('encodes only the words that need it, keeps spaces, and never splits a character between words', async () => {
    const subject = `Hello ${'a'.repeat(120)}  wörld ✓😀${'é'.repeat(40)} =?utf-8?B?aGk=?= done`;
    const folded = field('Subject', subject, SUBJECT_PLAIN_MAX);
    expect(folded.startsWith('Subject: Hello =?UTF-8?Q?')).toBe(true);
    expect(folded.endsWith(' done')).toBe(true);
    expect(longest(folded)).toBeLessThanOrEqual(78);
    expect(await readBack(folded)).toBe(subject);
    // each encoded word is whole UTF-8 on its own
    for (const word of folded.match(/=\?UTF-8\?Q\?[^?]*\?=/g) ?? []) expect(await decoded(word)).not.toContain('\ufffd');
  });

  it('leaves a plain subject as it is, folded before spaces', async () => {
    const subject = 'Your order has shipped and should arrive at the address you gave us by Friday afternoon';
    const folded = field('Subject', subject, SUBJECT_PLAIN_MAX);
    expect(folded).not.toContain('=?');
    expect(folded.replace(/\r\n/g, '')).toBe(`Subject: ${subject}`);
    expect(longest(folded)).toBeLessThanOrEqual(78);
  });

  it('writes a 2,000-character one-word custom header on lines of at most 998, and it reads back exactly', async () => {
    const value = 'v'.repeat(2_000);
    const folded = field('X-Campaign', value, 998 - 'X-Campaign'.length - 2);
    expect(longest(folded)).toBeLessThanOrEqual(998);
    expect(foldsOnly(folded)).toBe(true);
    expect(await readBack(folded)).toBe(value);
  });

  it('keeps the first line within 998 octets with the longest header name the API takes (921)', async () => {
    const name = `X-${'n'.repeat(919)}`;
    for (const value of ['w'.repeat(5_000), `${'a'.repeat(75)} ${'b'.repeat(76)}`, 'é'.repeat(100)]) {
      const folded = field(name, value, 998 - name.length - 2);
      expect(longest(folded)).toBeLessThanOrEqual(998);
      expect(await readBack(folded)).toBe(value);
    }
  });

  it('keeps a long URL of a custom header unencoded while it fits on a line (List-Unsubscribe is structured)', async () => {
    const url = `<https://acme.test/unsubscribe?token=${'t'.repeat(300)}>`;
    const folded = field('List-Unsubscribe', `${url}, <mailto:u@acme.test>`, 998 - 'List-Unsubscribe'.length - 2);
    expect(folded).toBe(`List-Unsubscribe: ${url},\r\n <mailto:u@acme.test>`);
  });
});

describe('writeHeaders', () => {
  const headers: MessageHeaders = {
    from: `${'N'.repeat(300)} <hi@acme.test>`,
    to: ['Jane <jane@example.test>'],
    cc: null,
    replyTo: null,
    subject: 'S'.repeat(10_000),
    headers: [{ key: 'X-Long', value: 'h'.repeat(2_000) }],
    messageId: '<id@acme.test>',
    date: new Date('2026-11-26T00:00:00Z'),
  };

  it('gives no line over 998 octets, and a reader gets back the subject, the header and a long display name', async () => {
    const head = writeHeaders(headers).join('\r\n');
    expect(longest(head)).toBeLessThanOrEqual(998);
    const parsed = await simpleParser(`${head}\r\nContent-Type: text/plain\r\n\r\nbody\r\n`);
    expect(parsed.subject).toBe(headers.subject);
    // mailparser leaves an X- header as sent: decode it as a reader of that header would
    expect(await decoded(String(parsed.headers.get('x-long')))).toBe('h'.repeat(2_000));
    const from = parsed.from?.value[0];
    expect([from?.name, from?.address]).toEqual(['N'.repeat(300), 'hi@acme.test']);
  });
});
