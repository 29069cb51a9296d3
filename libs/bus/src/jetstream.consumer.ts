import { LoggerService } from '@nestjs/common';
import {
  AckPolicy,
  ConsumerConfig,
  ConsumerInfo,
  ConsumerMessages,
  DeliverPolicy,
  JetStreamApiError,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
} from '@nats-io/jetstream';
import { DeferredChange, jetStreamUnavailable } from './jetstream-boot';
import { RetryPolicy } from './jetstream.settlement';

/** One durable pull consumer of a role. */
export interface JetStreamConsumerOptions {
  /** The stream to read, e.g. `sendStreamName(ns, region)`. */
  stream: string;
  /** Durable name, shared by every process of the role so they split the work. */
  durable: string;
  /** e.g. `sendSubject(ns, region)`; on a work-queue stream, consumers' filters must not overlap. */
  filterSubject: string;
  /** Most messages handed out and not yet acked, across all processes sharing the durable. Default 32. */
  maxAckPending?: number;
  /** How long a handler may run without `ctx.working()` before the message is redelivered. Default 30 s. */
  ackWaitMs?: number;
  /** Deliveries before the server gives up on a message; -1 (default) retries forever. */
  maxDeliver?: number;
  /** Backoff of naks after a failed handler. Default 1 s doubling up to 60 s. */
  retry?: Partial<RetryPolicy>;
}

const CONSUMER_NOT_FOUND = 10014;
/** Pause before pulling again after the pull loop failed (consumer deleted, connection closed). */
const RESTART_DELAY_MS = 1000;

/** How long one pull request lives on the server; also the consumer's back-off after a failed reset. */
const PULL_EXPIRES_MS = 5_000;

/**
 * Creates the durable consumer, or updates it if its settings changed. Safe from many processes at once.
 * A consumer with the desired settings is only read (its info, which its own servers answer):
 * creating or changing one needs the JetStream meta leader, which a supercluster lacks while it
 * has lost its quorum (one region of two down). An update that fails so is returned, not thrown:
 * the consumer works with its current settings meanwhile (JetStreamConsumers retries it later).
 */
export async function ensureConsumer(
  jsm: JetStreamManager,
  options: JetStreamConsumerOptions,
  maxAckPending: number,
): Promise<DeferredChange | null> {
  const desired: Partial<ConsumerConfig> = {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: options.filterSubject,
    max_ack_pending: maxAckPending,
    ack_wait: (options.ackWaitMs ?? 30_000) * 1e6,
    max_deliver: options.maxDeliver ?? -1,
  };
  let current = await consumerInfo(jsm, options.stream, options.durable);
  if (!current) {
    try {
      await jsm.consumers.add(options.stream, desired);
      return null;
    } catch (error) {
      // Lost a creation race to another process: compare with what it made.
      current = await consumerInfo(jsm, options.stream, options.durable);
      if (!current) throw error;
    }
  }
  const keys = ['filter_subject', 'max_ack_pending', 'ack_wait', 'max_deliver'] as const;
  const changed = keys.filter((key) => current.config[key] !== desired[key]);
  if (!changed.length) return null;
  try {
    await jsm.consumers.update(options.stream, options.durable, {
      filter_subject: desired.filter_subject,
      max_ack_pending: desired.max_ack_pending,
      ack_wait: desired.ack_wait,
      max_deliver: desired.max_deliver,
    });
    return null;
  } catch (error) {
    if (jetStreamUnavailable(error)) return { changed, error };
    throw new Error(
      `consumer ${options.stream}/${options.durable} differs in ${changed.join(', ')} and could not be updated: ${(error as Error).message}`,
    );
  }
}

async function consumerInfo(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | null> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND) return null;
    throw error;
  }
}

/**
 * Pulls one durable consumer and hands each message to `process`, never holding more than
 * `maxAckPending` messages in process at once. `process` settles the message and must not throw.
 */
export class ConsumerRunner {
  private readonly inFlight = new Set<Promise<void>>();
  private messages: ConsumerMessages | null = null;
  private stopping = false;
  private loop: Promise<void> | null = null;
  /** Wakes the pull loop from waiting for a free slot or from its restart pause. */
  private wake: (() => void) | null = null;

  constructor(
    private readonly options: JetStreamConsumerOptions,
    private readonly maxAckPending: number,
    private readonly js: JetStreamClient,
    private readonly process: (m: JsMsg) => Promise<void>,
    private readonly logger: LoggerService,
  ) {}

  get durable(): string {
    return this.options.durable;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops pulling, hands back what was pulled but not started, and waits for running handlers. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp();
    await this.messages?.close();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private async run(): Promise<void> {
    const { stream, durable } = this.options;
    while (!this.stopping) {
      try {
        const consumer = await this.js.consumers.get(stream, durable);
        // The client buffers at most this many; the server's max_ack_pending bounds the rest.
        // Pulls expire after PULL_EXPIRES_MS (heartbeats every half of it): when a reconnect finds
        // the cluster still electing its leaders, the client backs off by that long before it
        // pulls again, 30 s with the default (the 3-node cluster restart took 42–59 s to settle).
        this.messages = await consumer.consume({ max_messages: this.maxAckPending, expires: PULL_EXPIRES_MS });
        if (this.stopping) void this.messages.close();
        for await (const m of this.messages) {
          await this.freeSlot();
          // Pulled but not started: give it back at once so another process can take it.
          if (this.stopping) m.nak();
          else this.track(this.process(m));
        }
      } catch (error) {
        if (!this.stopping) this.logger.warn(`consumer ${stream}/${durable} stopped pulling: ${(error as Error).message}`);
      }
      if (!this.stopping) await this.pause(RESTART_DELAY_MS);
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => {
      this.inFlight.delete(tracked);
      this.wakeUp();
    });
    this.inFlight.add(tracked);
  }

  private async freeSlot(): Promise<void> {
    while (this.inFlight.size >= this.maxAckPending && !this.stopping) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
