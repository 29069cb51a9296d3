import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { resetSocket } from './reset-socket';

/**
 * A byte-level SMTP client for asserting exact replies: write anything (pipelined commands,
 * smuggling payloads), read replies one at a time.
 */
export class RawSmtpClient {
  private buffer = '';
  private readonly replies: string[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;
  private resolveClosed: () => void = () => undefined;
  /** Settles when the server has closed the connection. */
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
  private socket: Socket | TLSSocket;
  /** The server's 220 line. */
  greeting = '';

  private constructor(
    socket: Socket | TLSSocket,
    /** The TCP connection under any TLS, for a reset. */
    private readonly tcp: Socket,
  ) {
    this.socket = socket;
    this.attach(socket);
  }

  /** `localAddress` picks the client's address (any 127.x.y.z works on loopback), for per-address limits. */
  static async connect(port: number, mode: 'tls' | 'starttls', host = '127.0.0.1', localAddress?: string): Promise<RawSmtpClient> {
    const tcp = await new Promise<Socket>((resolve, reject) => {
      const s = netConnect({ port, host, localAddress }, () => resolve(s));
      s.once('error', reject);
    });
    const socket =
      mode === 'tls'
        ? await new Promise<TLSSocket>((resolve, reject) => {
            const s = tlsConnect({ socket: tcp, rejectUnauthorized: false }, () => resolve(s));
            s.once('error', reject);
          })
        : tcp;
    const client = new RawSmtpClient(socket, tcp);
    client.greeting = await client.reply();
    if (!client.greeting.startsWith('220 ')) throw new Error(`unexpected greeting ${client.greeting}`);
    return client;
  }

  private attach(socket: Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => {
      this.buffer += data;
      let end: number;
      // a reply is complete at a line `ddd text` (continuation lines are `ddd-text`)
      while ((end = this.completeReply()) >= 0) {
        this.replies.push(this.buffer.slice(0, end).replace(/\r\n$/, ''));
        this.buffer = this.buffer.slice(end);
      }
      this.wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.ended = true;
      this.wake();
      this.resolveClosed();
    });
  }

  private completeReply(): number {
    let start = 0;
    for (;;) {
      const nl = this.buffer.indexOf('\r\n', start);
      if (nl < 0) return -1;
      if (this.buffer[start + 3] !== '-') return nl + 2;
      start = nl + 2;
    }
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** The next reply (multi-line replies joined with \r\n); rejects if the connection closes first. */
  async reply(timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.replies.length === 0) {
      if (this.ended) throw new Error(`connection closed (unparsed: ${JSON.stringify(this.buffer)})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no reply in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.replies.shift()!;
  }

  /** Replies already received and not read yet. */
  pending(): string[] {
    return [...this.replies];
  }

  async command(line: string): Promise<string> {
    this.write(`${line}\r\n`);
    return this.reply();
  }

  /** STARTTLS, then the TLS handshake over the same socket. */
  async startTls(): Promise<string> {
    const reply = await this.command('STARTTLS');
    if (!reply.startsWith('220')) return reply;
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    const secure = await new Promise<TLSSocket>((resolve, reject) => {
      const s = tlsConnect({ socket: plain, rejectUnauthorized: false }, () => resolve(s));
      s.once('error', reject);
    });
    this.socket = secure;
    this.attach(secure);
    return reply;
  }

  /** EHLO, STARTTLS if on a plaintext socket, EHLO again, AUTH PLAIN. */
  async login(password: string, options: { starttls: boolean }): Promise<string> {
    await this.command('EHLO client.test');
    if (options.starttls) {
      await this.startTls();
      await this.command('EHLO client.test');
    }
    return this.command(`AUTH PLAIN ${Buffer.from(`\0herald\0${password}`).toString('base64')}`);
  }

  end(): void {
    this.socket.end();
  }

  /** Drops the connection with a TCP reset, as a crashing client or a cut network does. */
  reset(): void {
    resetSocket(this.tcp);
  }

  destroy(): void {
    this.socket.destroy();
  }
}
