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

/** How a path answers its nth delivery (0-based); `hang` never answers. */
export type Answer = number | 'hang';

/** A local endpoint: records every POST and answers per path as told. */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  private readonly answers = new Map<string, (n: number) => Answer>();
  private readonly counts = new Map<string, number>();
  private readonly open = new Map<string, { now: number; max: number }>();

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
      const delivery: ReceivedDelivery = { path, headers: req.headers, body, json: JSON.parse(body), at: Date.now() };
      this.received.push(delivery);
      const open = this.open.get(path) ?? { now: 0, max: 0 };
      this.open.set(path, open);
      open.max = Math.max(open.max, ++open.now);
      res.on('close', () => open.now--);
      const n = this.counts.get(path) ?? 0;
      this.counts.set(path, n + 1);
      const answer = (this.answers.get(path) ?? (() => 200))(n);
      delivery.answered = answer;
      if (answer === 'hang') return;
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(`answered ${answer}`);
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
