import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One POST as the receiver got it: when, where, and (to be parsed after the run) what. */
export interface BenchDelivery {
  path: string;
  /** Date.now() when the body was complete. */
  at: number;
  body: string;
  /** Kept for a sample only (every `headersEvery`-th delivery), for the signature check. */
  headers: IncomingMessage['headers'] | null;
}

/**
 * The bench's webhook endpoint: keep-alive node:http, answers 200 as soon as the body is in (or
 * `answerMs` later, as a remote endpoint's latency) and does nothing else on the hot path (no
 * parsing, no verifying); it counts, records receive times and the most requests open at once,
 * and the bench analyses the bodies afterwards.
 */
export class BenchWebhookReceiver {
  readonly deliveries: BenchDelivery[] = [];
  /** Requests received and not yet answered, now and at most. */
  private open = 0;
  maxOpen = 0;
  /** Resolves when `count` deliveries have arrived (set by `waitFor`). */
  private waiter: { count: number; resolve: () => void } | null = null;

  private constructor(
    private readonly server: Server,
    private readonly headersEvery: number,
    private readonly answerMs: number,
  ) {}

  static async start(headersEvery = 20, answerMs = 0): Promise<BenchWebhookReceiver> {
    const server = createServer({ keepAlive: true, keepAliveTimeout: 30_000 });
    const receiver = new BenchWebhookReceiver(server, headersEvery, answerMs);
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  get count(): number {
    return this.deliveries.length;
  }

  /** Resolves once `count` deliveries are in, or rejects when none arrived for `stallMs`. */
  async waitFor(count: number, stallMs: number): Promise<void> {
    const done = new Promise<void>((resolve) => {
      this.waiter = { count, resolve };
      this.check();
    });
    let last = -1;
    let since = Date.now();
    for (;;) {
      const finished = await Promise.race([done.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 250))]);
      if (finished) return;
      if (this.count !== last) {
        last = this.count;
        since = Date.now();
      } else if (Date.now() - since > stallMs) {
        throw new Error(`deliveries stalled at ${this.count} of ${count} for ${stallMs} ms`);
      }
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private check(): void {
    if (this.waiter && this.deliveries.length >= this.waiter.count) {
      this.waiter.resolve();
      this.waiter = null;
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.maxOpen = Math.max(this.maxOpen, ++this.open);
      const answer = () => {
        this.open--;
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      };
      if (this.answerMs > 0) setTimeout(answer, this.answerMs);
      else answer();
      const keepHeaders = this.deliveries.length % this.headersEvery === 0;
      this.deliveries.push({
        path: req.url ?? '/',
        at: Date.now(),
        body: Buffer.concat(chunks).toString('utf8'),
        headers: keepHeaders ? req.headers : null,
      });
      this.check();
    });
  }
}
