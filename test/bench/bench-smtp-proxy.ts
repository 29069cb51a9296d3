// The SMTP bench's submission shim (smtp-processes.ts forks it; SMTP.md says why it exists). Postfix's
// smtp-source speaks plain SMTP only: no STARTTLS, no AUTH. Herald's relay takes mail only over TLS
// from an authenticated client, as a submission service must. For each connection of smtp-source
// the shim opens a connection to the upstream server, does what a submission client does first
// (EHLO, STARTTLS, EHLO, and AUTH PLAIN when the route has credentials), then greets smtp-source
// with 220 and copies bytes both ways: every command smtp-source sends (its own EHLO, MAIL, RCPT,
// DATA, the message, QUIT) reaches the server unchanged, over TLS, and every reply comes back.
// Both systems are driven through it the same way (Postfix: STARTTLS, no AUTH, as mynetworks
// trusts loopback), so the shim's cost is the same on both sides and is metered apart.
//
// Routes come from BENCH_PROXY_ROUTES, JSON `[{ listen, host, port, user?, pass? }]`, listening on
// 127.0.0.1. IPC: sends {type:'ready', ports} once listening; answers {type:'stats'} with
// {type:'stats', stats} (per route: connections, handshake failures, the first errors).
import { connect as netConnect, createServer, Socket } from 'node:net';
import { connect as tlsConnect, TLSSocket } from 'node:tls';

export interface ProxyRoute {
  listen: number;
  host: string;
  port: number;
  user?: string;
  pass?: string;
}

export interface ProxyStats {
  connections: number;
  handshakeFailures: number;
  errors: string[];
}

export type ProxyMessageToParent = { type: 'ready'; ports: number[] } | { type: 'stats'; stats: ProxyStats[] };

/** Reads SMTP replies (possibly multi-line) from a socket, one at a time. */
class ReplyReader {
  private buffer = '';
  private waiting: ((reply: string) => void) | null = null;
  private failed: ((error: Error) => void) | null = null;
  private readonly onData = (chunk: Buffer) => {
    this.buffer += chunk.toString('latin1');
    this.deliver();
  };
  private readonly onEnd = () =>
    this.failed?.(new Error(`connection closed while waiting for a reply (${this.buffer.trim() || 'nothing received'})`));

  constructor(private readonly socket: Socket) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', (error) => this.failed?.(error));
  }

  /** The next complete reply: lines up to one whose code is followed by a space. */
  next(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failed = reject;
      this.deliver();
    });
  }

  private deliver(): void {
    if (!this.waiting) return;
    const match = /^\d{3} [^\n]*\n/m.exec(this.buffer);
    if (!match) return;
    const end = match.index + match[0].length;
    const reply = this.buffer.slice(0, end);
    this.buffer = this.buffer.slice(end);
    const resolve = this.waiting;
    this.waiting = null;
    this.failed = null;
    resolve(reply);
  }

  /** Stops reading (the socket is handed to TLS or to the byte copy); returns what was left over. */
  detach(): string {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    return this.buffer;
  }
}

async function expect(reader: ReplyReader, socket: Socket, command: string | null, code: string): Promise<void> {
  if (command !== null) socket.write(`${command}\r\n`);
  const reply = await reader.next();
  if (!reply.startsWith(code)) throw new Error(`${command ?? 'greeting'}: expected ${code}, got ${reply.trim().replace(/\r?\n/g, ' | ')}`);
}

/** Connects to the route's server and takes the session to the point where MAIL may be sent. */
async function openUpstream(route: ProxyRoute): Promise<TLSSocket> {
  const plain = netConnect({ host: route.host, port: route.port });
  plain.setNoDelay(true);
  const reader = new ReplyReader(plain);
  await expect(reader, plain, null, '220');
  await expect(reader, plain, 'EHLO bench-proxy.bench.test', '250');
  await expect(reader, plain, 'STARTTLS', '220');
  reader.detach();
  // a self-signed certificate: the shim encrypts like a client would, it does not authenticate the server
  const secure = tlsConnect({ socket: plain, rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve);
    secure.once('error', reject);
  });
  const tlsReader = new ReplyReader(secure);
  await expect(tlsReader, secure, 'EHLO bench-proxy.bench.test', '250');
  if (route.user !== undefined) {
    const token = Buffer.from(`\0${route.user}\0${route.pass ?? ''}`).toString('base64');
    await expect(tlsReader, secure, `AUTH PLAIN ${token}`, '235');
  }
  const left = tlsReader.detach();
  if (left) throw new Error(`unexpected data after the handshake: ${left.trim()}`);
  return secure;
}

function serve(route: ProxyRoute, stats: ProxyStats): Promise<number> {
  const server = createServer((client) => {
    stats.connections++;
    client.setNoDelay(true);
    client.pause();
    client.on('error', () => undefined);
    openUpstream(route).then(
      (upstream) => {
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.write('220 bench-proxy ESMTP (upstream ready)\r\n');
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      },
      (error: Error) => {
        stats.handshakeFailures++;
        if (stats.errors.length < 5) stats.errors.push(error.message);
        client.end('421 4.4.0 bench-proxy: upstream handshake failed\r\n');
      },
    );
  });
  server.maxConnections = 10_000;
  return new Promise((resolve) => server.listen(route.listen, '127.0.0.1', 1024, () => resolve((server.address() as { port: number }).port)));
}

async function main(): Promise<void> {
  const routes = JSON.parse(process.env.BENCH_PROXY_ROUTES ?? '[]') as ProxyRoute[];
  const stats = routes.map((): ProxyStats => ({ connections: 0, handshakeFailures: 0, errors: [] }));
  const ports = await Promise.all(routes.map((route, i) => serve(route, stats[i]!)));
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stats') process.send!({ type: 'stats', stats } satisfies ProxyMessageToParent);
  });
  // The bench disconnects to stop the shim.
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready', ports } satisfies ProxyMessageToParent);
}

void main();
