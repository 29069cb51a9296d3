import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * What the proxy does to the traffic, switchable while connections are open:
 * - `pass`: forwards both ways (after `latencyMs`, if set);
 * - `blackhole`: accepts connections and swallows every byte both ways, closes included: the
 *   peer sees a silent network, not a refusal, and only its own timeouts get it out;
 * - `cut-upstream` / `cut-downstream`: swallows one direction (client → service, or back);
 * - `refuse`: every new connection is reset as soon as it is accepted.
 */
export type ProxyMode = 'pass' | 'blackhole' | 'cut-upstream' | 'cut-downstream' | 'refuse';

interface Pair {
  client: Socket;
  upstream: Socket;
}

/**
 * A TCP proxy on a free loopback port in front of one service (Postgres, Redis, NATS, ...), so a
 * fault suite can partition one role from one service while the others keep talking to it.
 */
export class TcpProxy {
  private mode: ProxyMode = 'pass';
  private latencyMs = 0;
  private readonly pairs = new Set<Pair>();
  /** Connections accepted since start. */
  connections = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host?: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new TcpProxy(server, (server.address() as { port: number }).port, { host: target.host ?? '127.0.0.1', port: target.port });
    server.on('connection', (client) => proxy.accept(client));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's (e.g. a DATABASE_URL through the proxy). */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  set(mode: ProxyMode): this {
    this.mode = mode;
    return this;
  }

  /** Delays every chunk by this long, both ways (order kept). */
  latency(ms: number): this {
    this.latencyMs = ms;
    return this;
  }

  /** Back to passing, without latency. Connections black-holed meanwhile stay open (their bytes are gone). */
  heal(): this {
    this.mode = 'pass';
    this.latencyMs = 0;
    return this;
  }

  /** Resets (RST) every open connection, both sides. */
  reset(): void {
    for (const pair of this.pairs) {
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
  }

  async close(): Promise<void> {
    this.reset();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    this.connections++;
    client.on('error', () => undefined);
    if (this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(this.target);
    upstream.on('error', () => undefined);
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.on('data', (chunk) => this.forward(chunk, upstream, 'upstream'));
    upstream.on('data', (chunk) => this.forward(chunk, client, 'downstream'));
    const end = (other: Socket) => () => {
      // A black hole does not carry closes either: the other side stays open (and tracked, for reset and close).
      if (this.mode === 'blackhole' && !other.destroyed) return;
      this.pairs.delete(pair);
      other.destroy();
    };
    client.on('close', end(upstream));
    upstream.on('close', end(client));
  }

  private forward(chunk: Buffer, to: Socket, direction: 'upstream' | 'downstream'): void {
    if (this.mode === 'blackhole' || this.mode === `cut-${direction}`) return;
    if (this.latencyMs === 0) to.write(chunk);
    else setTimeout(() => to.writable && to.write(chunk), this.latencyMs);
  }
}
