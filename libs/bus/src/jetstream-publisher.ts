import { Inject, Injectable, Optional } from '@nestjs/common';
import { createInbox, headers, Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { NatsService } from './nats.service';
import type { PublishResult } from './send-publisher';

/** The jetstream client's own default (`defaultTimeout` in @nats-io/jetstream), so switching to this publisher changes no deadline. */
export const DEFAULT_PUBLISH_TIMEOUT_MS = 5000;

export interface JetStreamPublisherOptions {
  /** How long a publish waits for the stream's ack before it rejects. */
  timeoutMs?: number;
}

/** Optional provider of JetStreamPublisherOptions; without it the publisher uses the defaults. */
export const JETSTREAM_PUBLISHER_OPTIONS = Symbol('JETSTREAM_PUBLISHER_OPTIONS');

export type JetStreamPublishFailure = 'no_stream' | 'rejected' | 'timeout' | 'closed' | 'invalid_ack';

/** A publish the stream did not store (or did not confirm in time). */
export class JetStreamPublishError extends Error {
  constructor(
    readonly reason: JetStreamPublishFailure,
    readonly subject: string,
    message: string,
    /** JetStream's `err_code` when the stream refused the message (`reason` 'rejected'). */
    readonly errCode?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'JetStreamPublishError';
  }
}

const MSG_ID_HEADER = 'Nats-Msg-Id';
const NO_RESPONDERS = 503;

interface PendingPublish {
  subject: string;
  /** On the monotonic clock (`performance.now()`), so a wall-clock jump cannot reorder deadlines. */
  deadline: number;
  resolve: (result: PublishResult) => void;
  reject: (error: Error) => void;
}

/** What a stream answers to a publish: a PubAck, or an API error. */
interface PubAckReply {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; err_code?: number; description?: string };
}

/** Reads a reply to a publish; an Error is only made when the publish failed. */
function readAck(msg: Msg, subject: string): PublishResult | JetStreamPublishError {
  const status = msg.headers;
  if (status?.hasError) {
    return status.code === NO_RESPONDERS
      ? new JetStreamPublishError('no_stream', subject, `no JetStream stream for subject ${subject}`)
      : new JetStreamPublishError('rejected', subject, `publish to ${subject} failed: ${status.code} ${status.description}`);
  }
  let ack: PubAckReply;
  try {
    ack = msg.json<PubAckReply>();
  } catch (error) {
    return new JetStreamPublishError('invalid_ack', subject, `publish to ${subject}: the ack is not JSON`, undefined, { cause: error });
  }
  if (ack.error) {
    const description = ack.error.description ?? `error ${ack.error.code ?? 'without a code'}`;
    return new JetStreamPublishError('rejected', subject, `publish to ${subject} rejected: ${description}`, ack.error.err_code);
  }
  if (typeof ack.seq !== 'number' || !ack.stream) {
    return new JetStreamPublishError('invalid_ack', subject, `publish to ${subject}: the ack has no stream and sequence`);
  }
  return { seq: ack.seq, duplicate: ack.duplicate === true };
}

/**
 * One wildcard subscription on a private inbox and the publishes awaiting their ack on it. The
 * ack's subject ends with the publish's token, so one map lookup routes it; pending entries are
 * in publish order, and with one timeout for all also in deadline order.
 */
class AckInbox {
  readonly prefix = createInbox();
  readonly pending = new Map<string, PendingPublish>();
  readonly sub: Subscription;
  private idleWaiters: Array<() => void> = [];

  constructor(readonly nc: NatsConnection) {
    this.sub = nc.subscribe(`${this.prefix}.*`, {
      callback: (error, msg) => {
        if (!error) this.onReply(msg);
      },
    });
  }

  add(token: string, entry: PendingPublish): void {
    this.pending.set(token, entry);
  }

  /** Rejects, in deadline order, every publish whose ack is overdue. */
  expire(now: number): void {
    for (const [token, entry] of this.pending) {
      if (entry.deadline > now) break;
      this.pending.delete(token);
      entry.reject(new JetStreamPublishError('timeout', entry.subject, `publish to ${entry.subject}: no ack within the timeout`));
    }
    this.notifyIfIdle();
  }

  /** The subscription (or the connection) ended: no ack can arrive any more. */
  failAll(cause: Error | undefined): void {
    for (const entry of this.pending.values()) {
      entry.reject(
        new JetStreamPublishError('closed', entry.subject, `publish to ${entry.subject}: the NATS connection closed before the ack`, undefined, {
          cause,
        }),
      );
    }
    this.pending.clear();
    this.notifyIfIdle();
  }

  /** Resolves once no publish awaits an ack. */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private onReply(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const entry = this.pending.get(token);
    // An ack that came after its publish timed out, or a stray message on the inbox.
    if (!entry) return;
    this.pending.delete(token);
    const result = readAck(msg, entry.subject);
    if (result instanceof Error) entry.reject(result);
    else entry.resolve(result);
    this.notifyIfIdle();
  }

  private notifyIfIdle(): void {
    if (this.pending.size > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * JetStream publish without the nats.js request machinery. `js.publish` makes a request per
 * message: a timer each, and on every success a cancelled-request Error with a captured stack,
 * several percent of the API's CPU on the batch path. This does the same protocol by hand: one
 * inbox subscription, a token per publish, and one sweep for all deadlines.
 */
@Injectable()
export class JetStreamPublisher {
  private readonly timeoutMs: number;
  private inbox: AckInbox | null = null;
  private opening: Promise<AckInbox> | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private nextToken = 0;

  constructor(
    private readonly nats: NatsService,
    @Optional() @Inject(JETSTREAM_PUBLISHER_OPTIONS) options?: JetStreamPublisherOptions,
  ) {
    this.timeoutMs = options?.timeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
    nats.settleBeforeDrain(() => this.settled());
  }

  /** Publishes with `msgId` as the Nats-Msg-Id and resolves with the stream's ack. */
  publish(subject: string, payload: string | Uint8Array, msgId: string): Promise<PublishResult> {
    const inbox = this.inbox;
    if (inbox && !inbox.sub.isClosed()) return this.send(inbox, subject, payload, msgId);
    return this.openInbox().then((opened) => this.send(opened, subject, payload, msgId));
  }

  /** Resolves once every publish made so far has its ack (or has failed). */
  async settled(): Promise<void> {
    // Publishes made while the inbox was opening are sent as soon as it is open.
    if (this.opening) await this.opening.catch(() => undefined);
    if (this.inbox) await this.inbox.idle();
  }

  private send(inbox: AckInbox, subject: string, payload: string | Uint8Array, msgId: string): Promise<PublishResult> {
    return new Promise<PublishResult>((resolve, reject) => {
      const token = (this.nextToken++).toString(36);
      const hdrs = headers();
      hdrs.set(MSG_ID_HEADER, msgId);
      // A small Buffer comes from Node's pool; nats.js would encode a string into a new array (4× slower).
      const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
      // Throws synchronously (closed connection, payload too large), which rejects this promise.
      inbox.nc.publish(subject, data, { reply: `${inbox.prefix}.${token}`, headers: hdrs });
      inbox.add(token, { subject, deadline: performance.now() + this.timeoutMs, resolve, reject });
      if (this.sweeper === null) this.startSweeper();
    });
  }

  /** Subscribes once even when many publishes arrive before the connection is up. */
  private openInbox(): Promise<AckInbox> {
    this.opening ??= this.nats
      .connect()
      .then((nc) => this.subscribe(nc))
      .finally(() => {
        this.opening = null;
      });
    return this.opening;
  }

  /**
   * Reconnects keep the subscription (the client subscribes again), so only its end, by a close,
   * a drain or a server error, fails what is pending; the next publish subscribes anew.
   */
  private subscribe(nc: NatsConnection): AckInbox {
    const inbox = new AckInbox(nc);
    this.inbox = inbox;
    void inbox.sub.closed.then((error) => {
      if (this.inbox === inbox) this.inbox = null;
      inbox.failAll(error instanceof Error ? error : undefined);
    });
    return inbox;
  }

  /**
   * One timer for all deadlines, instead of one per publish. It stops itself once nothing is
   * pending (and is unref'd meanwhile); it must outlive module destroy, since the drain waits
   * for pending publishes and only the sweep ends one whose ack never comes.
   */
  private startSweeper(): void {
    const period = Math.max(10, Math.min(1000, this.timeoutMs / 4));
    this.sweeper = setInterval(() => this.sweep(), period);
    this.sweeper.unref();
  }

  private sweep(): void {
    const inbox = this.inbox;
    if (!inbox || inbox.pending.size === 0) {
      this.stopSweeper();
      return;
    }
    inbox.expire(performance.now());
  }

  private stopSweeper(): void {
    if (this.sweeper === null) return;
    clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
