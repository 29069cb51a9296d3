import { createServer, type Server, type Socket } from 'node:net';

/**
 * Misbehaviours smtp-server cannot act out, for MxSink's siblings in the fault suites:
 * - `trickle`: every reply, greeting included, is written one byte per `byteMs` (a tarpit that
 *   is never silent long enough for a per-read timeout, only for a per-command one);
 * - `drop-after-data`: takes the whole message, then closes without the final reply (the client
 *   cannot know whether the MX will deliver it: it must retry, and may duplicate);
 * - `accept`: a plain, fast MX.
 */
export type ScriptedBehaviour = 'accept' | { trickle: { byteMs: number } } | 'drop-after-data';

export interface ScriptedMessage {
  envelopeFrom: string;
  recipients: string[];
  /** Whether the MX answered 250 to the end of data (false: it took the data and dropped the line). */
  acknowledged: boolean;
  receivedAt: number;
}

/** A minimal plaintext ESMTP server on a loopback address, speaking only what Herald's transmitter sends. */
export class ScriptedMx {
  /** Every message whose data arrived in full, acknowledged or not. */
  readonly messages: ScriptedMessage[] = [];
  connections = 0;
  private behaviour: ScriptedBehaviour = 'accept';
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly host: string,
  ) {}

  static async start(options: { host: string; port: number }): Promise<ScriptedMx> {
    const server = createServer();
    const mx = new ScriptedMx(server, options.host);
    server.on('connection', (socket) => mx.session(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    return mx;
  }

  behave(behaviour: ScriptedBehaviour): this {
    this.behaviour = behaviour;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private session(socket: Socket): void {
    this.connections++;
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => this.sockets.delete(socket));
    const behaviour = this.behaviour;
    let output = Promise.resolve();
    const reply = (line: string) => {
      output = output.then(() => write(socket, `${line}\r\n`, typeof behaviour === 'object' ? behaviour.trickle.byteMs : 0));
    };
    let buffer = '';
    let inData = false;
    let from = '';
    let recipients: string[] = [];
    reply('220 mx.scripted.test ESMTP');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          const acknowledged = behaviour !== 'drop-after-data';
          this.messages.push({ envelopeFrom: from, recipients, acknowledged, receivedAt: Date.now() });
          if (!acknowledged) {
            socket.destroy();
            return;
          }
          reply('250 2.0.0 queued');
          recipients = [];
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') reply('250-mx.scripted.test\r\n250-PIPELINING\r\n250 8BITMIME');
        else if (verb === 'MAIL') {
          from = /<([^>]*)>/.exec(line)?.[1] ?? '';
          recipients = [];
          reply('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          recipients.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
          reply('250 2.1.5 ok');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 go ahead');
        } else if (verb === 'QUIT') {
          reply('221 2.0.0 bye');
          void output.then(() => socket.end());
        } else if (verb === 'RSET' || verb === 'NOOP') reply('250 2.0.0 ok');
        else reply('502 5.5.2 not implemented');
      }
    });
  }
}

function write(socket: Socket, text: string, byteMs: number): Promise<void> {
  if (byteMs === 0) {
    if (socket.writable) socket.write(text);
    return Promise.resolve();
  }
  return (async () => {
    for (const byte of text) {
      if (!socket.writable) return;
      socket.write(byte);
      await new Promise((r) => setTimeout(r, byteMs));
    }
  })();
}
