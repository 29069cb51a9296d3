import { connect } from 'node:net';
import { createTransport } from 'nodemailer';
import { freeSharedPort, MxSink } from './mx-sink';
import { RawSmtpClient } from './raw-smtp-client';

const RAW = Buffer.from('Subject: hi\r\n\r\nhello\r\n');

describe('MxSink', () => {
  let port: number;
  let sink: MxSink;
  let other: MxSink;
  const send = (host: string, to: string[], options: { ignoreTLS?: boolean } = {}) =>
    createTransport({ host, port, name: 'client.test', tls: { rejectUnauthorized: false }, ...options }).sendMail({
      envelope: { from: 'from@herald.test', to },
      raw: RAW,
    });

  beforeAll(async () => {
    port = await freeSharedPort(['127.0.0.2', '127.0.0.3']);
    sink = await MxSink.start({ host: '127.0.0.2', port });
    other = await MxSink.start({ host: '127.0.0.3', port, starttls: false, keepRaw: false });
  });
  afterAll(async () => {
    await Promise.all([sink.close(), other.close()]);
  });
  beforeEach(() => {
    sink.reset();
    other.reset();
  });

  it('records accepted messages with their envelope, EHLO name and whether STARTTLS was used', async () => {
    await send('127.0.0.2', ['a@example.test', 'b@example.test']);
    await sink.waitForMessages(1, 1_000);
    expect(sink.messages).toEqual([
      expect.objectContaining({
        envelopeFrom: 'from@herald.test',
        recipients: ['a@example.test', 'b@example.test'],
        raw: RAW,
        secure: true,
        clientHostname: 'client.test',
        remoteAddress: '127.0.0.1',
      }),
    ]);
    expect(sink.connections).toBe(1);
  });

  it('shares one port across loopback addresses; keepRaw off only counts', async () => {
    await send('127.0.0.3', ['a@example.test']);
    expect(other.received).toBe(1);
    expect(other.messages).toEqual([]);
    expect(sink.received).toBe(0);
  });

  it('answers with the configured replies, verbatim', async () => {
    sink.recipientRule('gone@example.test', { reject: '550 5.1.1 user unknown' });
    const info = await send('127.0.0.2', ['ok@example.test', 'gone@example.test']);
    expect(info.rejected).toEqual(['gone@example.test']);
    sink.behave({ defer: '451 4.7.1 try later' });
    await expect(send('127.0.0.2', ['ok@example.test'])).rejects.toMatchObject({ response: '451 4.7.1 try later' });
    sink.behave('greylist');
    await expect(send('127.0.0.2', ['new@example.test'])).rejects.toMatchObject({ responseCode: 450 });
    await send('127.0.0.2', ['new@example.test']);
    expect(sink.received).toBe(2);
  });

  it('refuses every session at the greeting with the configured reply', async () => {
    sink.behave({ greeting: '421 4.3.2 too busy' });
    await expect(send('127.0.0.2', ['a@example.test'])).rejects.toMatchObject({ code: 'EPROTOCOL', response: '421 4.3.2 too busy' });
    await expect(send('127.0.0.2', ['a@example.test'])).rejects.toMatchObject({ response: '421 4.3.2 too busy' });
    expect(sink.connections).toBe(2);
    expect(sink.received).toBe(0);
  });

  it('drops at DATA, and closes without hanging on a stalled session', async () => {
    sink.behave('drop');
    await expect(send('127.0.0.2', ['a@example.test'])).rejects.toMatchObject({ code: 'ECONNECTION' });
    const stalled = await MxSink.start({ host: '127.0.0.4', port });
    stalled.behave('stall');
    const socket = connect(port, '127.0.0.4');
    const greeting = new Promise<string>((resolve) => socket.once('data', (data) => resolve(data.toString())));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await stalled.close();
    expect(Date.now() - started).toBeLessThan(500);
    expect(await Promise.race([greeting, new Promise((resolve) => socket.once('close', () => resolve('closed')))])).toBe('closed');
  });

  it('holds replies to the end of data until released: accepts those whose client waited, drops those whose client went away', async () => {
    sink.behave('hold');
    const transaction = async (to: string) => {
      const client = await RawSmtpClient.connect(port, 'starttls', '127.0.0.2');
      for (const line of ['EHLO client.test', 'MAIL FROM:<from@herald.test>', `RCPT TO:<${to}>`]) expect(await client.command(line)).toMatch(/^250/);
      expect(await client.command('DATA')).toMatch(/^354/);
      client.write(`${RAW.toString()}.\r\n`);
      return client;
    };
    const waiting = await transaction('waits@example.test');
    const leaving = await transaction('leaves@example.test');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sink.holding()).toEqual({ held: 2, connected: 2 });
    expect(waiting.pending()).toEqual([]);
    leaving.destroy();
    const deadline = Date.now() + 2_000;
    while (sink.holding().connected > 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sink.holding()).toEqual({ held: 2, connected: 1 });
    sink.release();
    expect(await waiting.reply()).toMatch(/^250/);
    waiting.end();
    expect(sink.messages.map((m) => m.recipients)).toEqual([['waits@example.test']]);
    expect({ received: sink.received, dropped: sink.dropped, holding: sink.holding() }).toEqual({
      received: 1,
      dropped: 1,
      holding: { held: 0, connected: 0 },
    });
    // Released, it accepts at once again.
    await send('127.0.0.2', ['after@example.test']);
    expect(sink.received).toBe(2);
  });
});
