import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { resetSocket } from './reset-socket';

/**
 * What the proxy does to the traffic, switchable while connections are open:
 * - `pass`: forwards both ways (after `latencyMs`, if set);
 * - `blackhole`: a partition. Connections are accepted and every byte both ways (closes too) is
 *   held, as TCP keeps retransmitting: the peers see silence, not a refusal, and only their own
 *   timeouts get them out. On `heal` what was held is delivered, as after a partition heals;
 *   `reset` instead drops it with the connections (the partition outlived TCP, or a host died);
 * - `cut-upstream` / `cut-downstream`: the same for one direction (client → service, or back);
 * - `refuse`: every new connection is reset as soon as it is accepted.
 */
export type ProxyMode = 'pass' | 'blackhole' | 'cut-upstream' | 'cut-downstream' | 'refuse';
type Direction = 'upstream' | 'downstream';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Bytes (null: the sender's close) held per direction while it is cut. */
  held: Record<Direction, (Buffer | null)[]>;
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
    this.flush();
    return this;
  }

  /** Delays every chunk by this long, both ways (order kept). */
  latency(ms: number): this {
    this.latencyMs = ms;
    return this;
  }

  /** Back to passing, without latency; what a cut held is delivered now. */
  heal(): this {
    this.latencyMs = 0;
    return this.set('pass');
  }

  /** Resets (RST) every open connection, both sides; what a cut held is dropped. */
  reset(): void {
    for (const pair of this.pairs) {
      resetSocket(pair.client);
      resetSocket(pair.upstream);
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
      resetSocket(client);
      return;
    }
    const upstream = createConnection(this.target);
    upstream.on('error', () => undefined);
    const pair: Pair = { client, upstream, held: { upstream: [], downstream: [] } };
    this.pairs.add(pair);
    client.on('data', (chunk) => this.forward(pair, 'upstream', chunk));
    upstream.on('data', (chunk) => this.forward(pair, 'downstream', chunk));
    client.on('close', () => this.forward(pair, 'upstream', null));
    upstream.on('close', () => this.forward(pair, 'downstream', null));
  }

  private cut(direction: Direction): boolean {
    return this.mode === 'blackhole' || this.mode === `cut-${direction}`;
  }

  /** Sends a chunk (or a close, as null) on its way, or holds it while its direction is cut. */
  private forward(pair: Pair, direction: Direction, chunk: Buffer | null): void {
    if (this.cut(direction) || pair.held[direction].length > 0) {
      pair.held[direction].push(chunk);
      return;
    }
    const to = direction === 'upstream' ? pair.upstream : pair.client;
    const deliver = () => {
      if (chunk) {
        if (to.writable) to.write(chunk);
        return;
      }
      this.pairs.delete(pair);
      to.end();
    };
    if (this.latencyMs === 0) deliver();
    else setTimeout(deliver, this.latencyMs);
  }

  private flush(): void {
    for (const pair of this.pairs) {
      for (const direction of ['upstream', 'downstream'] as const) {
        if (this.cut(direction)) continue;
        for (const chunk of pair.held[direction].splice(0)) this.forward(pair, direction, chunk);
      }
    }
  }
}
