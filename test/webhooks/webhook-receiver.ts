import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: { type: string; created_at: string; data: Record<string, unknown> };
  at: number;
  /** What the receiver answered (`hang`: nothing). */
  answered?: Answer;
}

/** How a path answers its nth delivery (0-based): a status at once, a status after `afterMs`, or never (`hang`). */
export type Answer = number | { status: number; afterMs: number } | 'hang';

/** Requests to one path open at once: now, at most, and integrated over time since the first. */
interface OpenCount {
  now: number;
  max: number;
  since: number;
  changedAt: number;
  integral: number;
}

/** A local endpoint: records every POST and answers per path as told. */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  /**
   * Keep each delivery's body, parsed JSON and headers (default true). Off, a delivery keeps its
   * `webhook-id` header, its event type and when and how it was answered: a long run (the soak:
   * 300,000 deliveries) then does not hold them all in the test's own heap.
   */
  keepBodies = true;
  private readonly answers = new Map<string, (n: number) => Answer>();
  private readonly counts = new Map<string, number>();
  private readonly open = new Map<string, OpenCount>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  answer(path: string, answer: (n: number) => Answer): void {
    this.answers.set(path, answer);
  }

  /** The most requests to `path` that were open (received, not yet answered or dropped) at once. */
  maxOpen(path: string): number {
    return this.open.get(path)?.max ?? 0;
  }

  /** Requests to `path` open right now. */
  openNow(path: string): number {
    return this.open.get(path)?.now ?? 0;
  }

  /**
   * How many requests to `path` were open on average, from the first one received (since the last
   * reset) to the last answered: by Little's law, its delivery rate in requests per answer time.
   */
  meanOpen(path: string): number {
    const open = this.open.get(path);
    return open && open.changedAt > open.since ? open.integral / (open.changedAt - open.since) : 0;
  }

  /** Starts counting `maxOpen` and `meanOpen` of `path` afresh (what is open now stays open). */
  resetOpen(path: string): void {
    const open = this.open.get(path);
    if (open) Object.assign(open, { max: open.now, since: Date.now(), changedAt: Date.now(), integral: 0 });
  }

  at(path: string): ReceivedDelivery[] {
    return this.received.filter((d) => d.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      const json = JSON.parse(body) as ReceivedDelivery['json'];
      const delivery: ReceivedDelivery = this.keepBodies
        ? { path, headers: req.headers, body, json, at: Date.now() }
        : {
            path,
            headers: { 'webhook-id': req.headers['webhook-id'] },
            body: '',
            json: { type: json.type, created_at: json.created_at, data: {} },
            at: Date.now(),
          };
      this.received.push(delivery);
      const open = this.open.get(path) ?? { now: 0, max: 0, since: Date.now(), changedAt: Date.now(), integral: 0 };
      this.open.set(path, open);
      const change = (by: number) => {
        const at = Date.now();
        open.integral += open.now * (at - open.changedAt);
        open.changedAt = at;
        open.now += by;
        open.max = Math.max(open.max, open.now);
      };
      change(1);
      // Closed when answered (the client may send the next request before the socket's 'close'
      // comes round) or when dropped unanswered, whichever comes first.
      let closed = false;
      const close = () => {
        if (!closed) change(-1);
        closed = true;
      };
      res.on('close', close);
      const n = this.counts.get(path) ?? 0;
      this.counts.set(path, n + 1);
      const answer = (this.answers.get(path) ?? (() => 200))(n);
      if (answer === 'hang') {
        delivery.answered = answer;
        return;
      }
      const status = typeof answer === 'number' ? answer : answer.status;
      delivery.answered = status;
      const reply = () => {
        if (res.destroyed) return;
        close();
        res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
      };
      if (typeof answer === 'number') reply();
      else setTimeout(reply, answer.afterMs);
    });
  }
}

/**
 * The Standard Webhooks check (what the `standardwebhooks` verifier does), against one header
 * family: HMAC-SHA256 of `id.timestamp.body` keyed with the base64 after `whsec_`, any listed
 * `v1,` signature matching, timestamp within 5 minutes.
 */
export function verifySignature(delivery: ReceivedDelivery, secret: string, family: 'webhook' | 'svix'): boolean {
  const id = delivery.headers[`${family}-id`] as string;
  const timestamp = delivery.headers[`${family}-timestamp`] as string;
  const signatures = (delivery.headers[`${family}-signature`] as string).split(' ');
  if (!id || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest('base64'));
  return signatures.some((s) => {
    const [version, sig] = s.split(',');
    const given = Buffer.from(sig ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
