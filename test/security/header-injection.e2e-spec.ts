import { simpleParser } from 'mailparser';
import { RelayHost } from '@herald/smtp';
import { RawSmtpClient, type MxSink, type SinkMessage } from '@herald/testing';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(120_000);

/** Line breaks and the other characters that have no place in a header line. */
const CONTROLS: Record<string, string> = {
  CRLF: '\r\n',
  LF: '\n',
  CR: '\r',
  NUL: '\u0000',
  VT: '\u000b',
  ESC: '\u001b',
  DEL: '\u007f',
  NEL: '\u0085',
  'U+2028': '\u2028',
};
const LINE_BREAKS = ['CRLF', 'LF', 'CR'];
const INJECTED = 'Bcc: victim@evil.test';
const VICTIM = 'victim@evil.test';

/** A field that reaches a header of the message Herald writes: the request with `bad` in it, and the field an error must name. */
interface Field {
  label: string;
  /** How a 422 names it (`to`, `headers`, `attachments[0].filename`, ...). */
  name: string;
  body: (bad: string, team: TestTeam, to: string) => Record<string, unknown>;
}
const FIELDS: Field[] = [
  { label: 'subject', name: 'subject', body: (bad) => ({ subject: `Hello${bad}${INJECTED}` }) },
  { label: 'from display name', name: 'from', body: (bad, team) => ({ from: `"Acme${bad}${INJECTED}" <${team.from()}>` }) },
  { label: 'from address', name: 'from', body: (bad, team) => ({ from: `${team.from()}${bad}${INJECTED}` }) },
  { label: 'to address', name: 'to', body: (bad, _team, to) => ({ to: `${to}${bad}${INJECTED}` }) },
  { label: 'to display name', name: 'to', body: (bad, _team, to) => ({ to: `"Jane${bad}${INJECTED}" <${to}>` }) },
  { label: 'cc address', name: 'cc', body: (bad) => ({ cc: `cc@inbox.test${bad}${INJECTED}` }) },
  { label: 'bcc address', name: 'bcc', body: (bad) => ({ bcc: `bcc@inbox.test${bad}${INJECTED}` }) },
  { label: 'reply_to address', name: 'reply_to', body: (bad) => ({ reply_to: `help@inbox.test${bad}${INJECTED}` }) },
  { label: 'reply_to display name', name: 'reply_to', body: (bad) => ({ reply_to: `"Help${bad}${INJECTED}" <help@inbox.test>` }) },
  { label: 'custom header value', name: 'headers', body: (bad) => ({ headers: { 'X-Note': `a${bad}${INJECTED}` } }) },
  { label: 'custom header name', name: 'headers', body: (bad) => ({ headers: { [`X-Note${bad}Bcc`]: VICTIM } }) },
  { label: 'tag name', name: 'tags[0].name', body: (bad) => ({ tags: [{ name: `a${bad}b`, value: 'v' }] }) },
  { label: 'tag value', name: 'tags[0].value', body: (bad) => ({ tags: [{ name: 'a', value: `v${bad}${INJECTED}` }] }) },
  {
    label: 'attachment filename',
    name: 'attachments[0].filename',
    body: (bad) => ({ attachments: [{ filename: `a${bad}${INJECTED}.txt`, content: 'aGk=' }] }),
  },
  {
    label: 'attachment content_type',
    name: 'attachments[0].content_type',
    body: (bad) => ({ attachments: [{ filename: 'a.txt', content: 'aGk=', content_type: `text/plain${bad}${INJECTED}` }] }),
  },
  {
    label: 'attachment content_id',
    name: 'attachments[0].content_id',
    body: (bad) => ({ attachments: [{ filename: 'a.png', content: 'aGk=', content_id: `logo${bad}${INJECTED}` }] }),
  },
];

/** The header block of a message as sent: its physical lines. */
const headerLines = (raw: Buffer): string[] => raw.toString('latin1').split('\r\n\r\n')[0]!.split('\r\n');

/**
 * Header injection (issue 17, security): every field of POST /emails that reaches a header of
 * the message, with each line break and other control character. Line breaks and control
 * characters (C0, DEL, C1) are refused with 422 naming the field, except a line break in
 * `subject`, which is folded into a space (documented in /openapi.json: a pasted subject with a
 * stray newline is harmless once folded, and Resend documents no error). Unicode's own line
 * separators (U+2028) are text in a display name, a subject, a header value or a file name.
 * Whatever is accepted is delivered through the worker to an MX sink, and
 * there its header block has no line that is not printable ASCII (the other characters travel as
 * RFC 2047 encoded words), no header the request did not ask for, and the sink saw no recipient
 * but the intended ones. Then the SMTP relay: a bare CR or LF in a header line is refused whole.
 */
describe('header injection through every field that reaches a header', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;

  beforeAll(async () => {
    world = await DeliveryWorld.start();
    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
  });
  afterAll(() => world?.close());

  it('refuses line breaks with 422 naming the field (subject: folded), and delivers nothing but what was asked', async () => {
    const accepted: { label: string; control: string; id: string; to: string; body: Record<string, unknown> }[] = [];
    const table: string[] = [];
    let n = 0;
    for (const field of FIELDS) {
      for (const [control, bad] of Object.entries(CONTROLS)) {
        const to = `u${++n}@inbox.test`;
        const body = { from: team.from(), to, subject: 'Hello', text: 'Hi', ...field.body(bad, team, to) };
        const reply = await call(world.api.url, team.token, 'POST', '/emails', body);
        table.push(`${field.label.padEnd(24)} ${control.padEnd(7)} ${reply.status} ${reply.body.name ?? ''}`);
        const seen = { field: field.label, control, status: reply.status };
        if (reply.status === 200) {
          accepted.push({ label: field.label, control, id: reply.body.id, to, body });
          const text = control === 'U+2028' || (field.name === 'subject' && LINE_BREAKS.includes(control));
          expect(seen).toEqual({ ...seen, status: text ? 200 : 422 });
          continue;
        }
        expect(seen).toEqual({ ...seen, status: 422 });
        expect({ ...seen, message: reply.body.message }).toEqual({ ...seen, message: expect.stringContaining(`\`${field.name}`) });
        if (field.name === 'subject') expect(LINE_BREAKS).not.toContain(control);
      }
    }
    console.log(`POST /emails with a control character in each field:\n${table.join('\n')}`);

    for (const email of accepted) await world.waitForEvent(email.id, 'email.delivered');
    const atSink = (to: string): SinkMessage[] => sink.messages.filter((m) => m.recipients.includes(to));
    expect(sink.messages.flatMap((m) => m.recipients)).not.toContain(VICTIM);
    for (const email of accepted) {
      const [message, ...more] = atSink(email.to);
      expect({ label: email.label, control: email.control, copies: 1 + more.length }).toEqual({
        label: email.label,
        control: email.control,
        copies: 1,
      });
      const unsafe = headerLines(message!.raw).filter((line) => /[^\t\x20-\x7e]/.test(line));
      expect({ label: email.label, control: email.control, unsafe }).toEqual({ label: email.label, control: email.control, unsafe: [] });
      const parsed = await simpleParser(message!.raw);
      expect({ label: email.label, control: email.control, bcc: parsed.headers.has('bcc') }).toEqual({
        label: email.label,
        control: email.control,
        bcc: false,
      });
      expect(parsed.to).toMatchObject({ value: [{ address: email.to }] });
      if (email.label === 'subject') {
        // What was accepted is what arrives: the subject with its line breaks folded into one space, nothing else changed.
        const asked = (email.body.subject as string).replace(/[\r\n]+/g, ' ');
        expect({ control: email.control, subject: parsed.subject }).toEqual({ control: email.control, subject: asked });
      }
    }
    console.log(
      `${accepted.length} accepted (${[...new Set(accepted.map((a) => `${a.label}/${a.control}`))].join(', ')}), each delivered once, safely`,
    );
  });

  it('through the SMTP relay: a header line with a bare CR or LF is refused whole (550 5.6.11), nothing reaches the MX', async () => {
    const relay = world.smtp.get(RelayHost);
    for (const bad of ['\r', '\n']) {
      sink.reset();
      const client = await RawSmtpClient.connect(relay.port('starttls'), 'starttls');
      expect(await client.login(team.token, { starttls: true })).toMatch(/^235 /);
      expect(await client.command(`MAIL FROM:<${team.from()}>`)).toMatch(/^250 /);
      expect(await client.command('RCPT TO:<relay@inbox.test>')).toMatch(/^250 /);
      expect(await client.command('DATA')).toMatch(/^354 /);
      client.write(`From: ${team.from()}\r\nTo: relay@inbox.test\r\nSubject: Hello${bad}${INJECTED}\r\n\r\nHi\r\n.\r\n`);
      expect({ bad: JSON.stringify(bad), reply: await client.reply() }).toEqual({
        bad: JSON.stringify(bad),
        reply: expect.stringMatching(/^550 5\.6\.11 /),
      });
      client.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.messages).toEqual([]);
  });
});
