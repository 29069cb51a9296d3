import { RELAY_REPLIES } from './smtp-replies';
import type { Principal } from '@herald/accounts';
import type { MessageSpool, SmtpEnvelope, SubmissionResult } from './submission-port';
import { FakePort, RelayHarness } from '../../../test/support/relay-harness';

/** What a spool was given: the head it opened with, the bytes written after, whether it was discarded. */
class RecordingSpool implements MessageSpool {
  readonly chunks: Buffer[] = [];
  discarded = false;

  constructor(readonly head: Buffer) {}

  async write(chunk: Buffer): Promise<void> {
    this.chunks.push(Buffer.from(chunk));
    // a busy store: the relay must wait before reading on
    await new Promise((resolve) => setImmediate(resolve));
  }

  async discard(): Promise<void> {
    this.discarded = true;
  }

  message(): Buffer {
    return Buffer.concat([this.head, ...this.chunks]);
  }
}

class SpoolingPort extends FakePort {
  readonly spools: RecordingSpool[] = [];
  readonly spooledSubmits: (MessageSpool | undefined)[] = [];

  spool(head: Buffer): RecordingSpool {
    const spool = new RecordingSpool(head);
    this.spools.push(spool);
    return spool;
  }

  override async submit(principal: Principal, envelope: SmtpEnvelope, raw: Buffer, spool?: MessageSpool): Promise<SubmissionResult> {
    this.spooledSubmits.push(spool);
    return super.submit(principal, envelope, raw);
  }
}

const SPOOL_AFTER = 2048;
const MAX = 1024 * 1024;
const line = (i: number) => `line ${String(i).padStart(6, '0')} ${'x'.repeat(60)}\r\n`;
const body = (bytes: number) => Array.from({ length: Math.ceil(bytes / line(0).length) }, (_, i) => line(i)).join('');
const message = (header: string, bodyBytes: number) =>
  `From: App <app@acme.test>\r\nTo: bob@example.com\r\n${header}Subject: big\r\n\r\n${body(bodyBytes)}`;

/** DATA past spoolAfterBytes: the relay holds the message's start and writes the rest to the port's spool as it arrives. */
describe('DATA with a spool', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());

  async function send(port: SpoolingPort, data: string): Promise<string> {
    const relay = await harness.start(port, { maxBytes: MAX, spoolAfterBytes: SPOOL_AFTER });
    const c = await harness.authenticated(relay);
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
    expect(await c.command('RCPT TO:<bob@example.com>')).toBe('250 Accepted');
    expect(await c.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
    return c.command(`${data}.`);
  }

  it('submits the start of a large message with the spool that has the rest, byte for byte', async () => {
    const port = new SpoolingPort();
    const sent = message('', 400_000);
    expect(await send(port, sent)).toBe('250 2.0.0 OK email-1');
    const [spool] = port.spools;
    expect(port.spools).toHaveLength(1);
    expect(port.submits[0].raw).toBe(spool.head);
    expect(port.spooledSubmits[0]).toBe(spool);
    expect(spool.head.length).toBeGreaterThanOrEqual(SPOOL_AFTER);
    expect(spool.head.length).toBeLessThan(sent.length / 2);
    expect(spool.message().toString('latin1')).toBe(sent);
    expect(spool.discarded).toBe(false);
  });

  it('holds a message under the size whole, without a spool', async () => {
    const port = new SpoolingPort();
    const sent = message('', 1000);
    expect(await send(port, sent)).toBe('250 2.0.0 OK email-1');
    expect(port.spools).toEqual([]);
    expect(port.submits[0].raw.toString('latin1')).toBe(sent);
    expect(port.spooledSubmits).toEqual([undefined]);
  });

  it('opens the spool only once the header has ended', async () => {
    const port = new SpoolingPort();
    const header = Array.from({ length: 60 }, (_, i) => `X-Long-${i}: ${'h'.repeat(70)}\r\n`).join('');
    const sent = message(header, 20_000);
    expect(await send(port, sent)).toBe('250 2.0.0 OK email-1');
    const [spool] = port.spools;
    expect(spool.head.indexOf('\r\n\r\n')).toBeGreaterThan(header.length);
    expect(spool.message().toString('latin1')).toBe(sent);
  });

  it('answers 552 to a message that passes the limit after its spool opened, and discards the spool', async () => {
    const port = new SpoolingPort();
    expect(await send(port, message('', MAX + 10_000))).toBe(`552 ${RELAY_REPLIES.tooBig(MAX).text}`);
    expect(port.submits).toEqual([]);
    expect(port.spools).toHaveLength(1);
    expect(port.spools[0].discarded).toBe(true);
    // nothing past the limit was written to it
    expect(port.spools[0].message().length).toBeLessThanOrEqual(MAX);
  });

  it('refuses a bare LF after the spool opened, and discards the spool', async () => {
    const port = new SpoolingPort();
    expect(await send(port, `${message('', 400_000)}bare\nline\r\n`)).toBe(`550 ${RELAY_REPLIES.bareLf.text}`);
    expect(port.submits).toEqual([]);
    expect(port.spools[0].discarded).toBe(true);
  });

  it('discards the spool of a message the port refuses', async () => {
    const port = new SpoolingPort();
    port.submitResult = async () => ({ ok: false, reply: { code: 550, enhanced: '5.7.1', message: 'Not from here' } });
    expect(await send(port, message('', 400_000))).toBe('550 5.7.1 Not from here');
    expect(port.spools[0].discarded).toBe(true);
  });
});
