import { once } from 'node:events';
import { createConnection } from 'node:net';
import { freeLoopbackPort } from './free-port';
import { ScriptedMx } from './scripted-mx';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ScriptedMx', () => {
  let mx: ScriptedMx;
  let port: number;

  beforeEach(async () => {
    port = await freeLoopbackPort();
    mx = await ScriptedMx.start({ host: '127.0.0.1', port });
  });
  afterEach(() => mx.close());

  async function session(lines: string[]): Promise<{ text: string; closedAt: number; startedAt: number }> {
    const startedAt = Date.now();
    const socket = createConnection({ host: '127.0.0.1', port });
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => undefined);
    const closed = once(socket, 'close');
    await once(socket, 'connect');
    for (const line of lines) {
      socket.write(`${line}\r\n`);
      await sleep(20);
    }
    await closed;
    return { text, closedAt: Date.now(), startedAt };
  }

  it('takes the whole message, then drops the line without the final reply', async () => {
    mx.behave('drop-after-data');
    const { text } = await session(['EHLO me', 'MAIL FROM:<a@x.test>', 'RCPT TO:<b@y.test>', 'DATA', 'Subject: hi\r\n\r\nbody\r\n.']);
    expect(text).toContain('354');
    expect(text).not.toContain('queued');
    expect(mx.messages).toEqual([expect.objectContaining({ envelopeFrom: 'a@x.test', recipients: ['b@y.test'], acknowledged: false })]);
  });

  it('trickles every reply one byte at a time', async () => {
    mx.behave({ trickle: { byteMs: 10 } });
    const { text, startedAt, closedAt } = await session(['QUIT']);
    expect(text).toBe('220 mx.scripted.test ESMTP\r\n221 2.0.0 bye\r\n');
    expect(closedAt - startedAt).toBeGreaterThanOrEqual(text.length * 10 * 0.9);
  });
});
