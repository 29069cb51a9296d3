import { connect } from 'node:net';
import { createTransport } from 'nodemailer';
import { freeSharedPort, MxSink } from './mx-sink';

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
});
