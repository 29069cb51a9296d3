import { Logger, OnApplicationBootstrap, Provider, Type } from '@nestjs/common';
import { JsMsg } from '@nats-io/jetstream';
import { BackgroundRetry, DeferredChange, jetStreamMessage, retryInBackground, whileJetStreamForms } from './jetstream-boot';
import { ConsumerRunner, ensureConsumer, JetStreamConsumerOptions } from './jetstream.consumer';
import { JetStreamContext } from './jetstream.context';
import { ACK, decodePayload, DEFAULT_RETRY, RetryPolicy, Settlement, settlementForError } from './jetstream.settlement';
import { NatsService } from './nats.service';

/**
 * What a consumer's messages go to: validates the payload, calls one service method. Resolving
 * acks the message; throwing settles it per jetstream.settlement.ts (term or nak).
 */
export interface JetStreamHandler {
  handle(payload: unknown, context: JetStreamContext): Promise<void>;
}

/** One durable consumer of the role and the provider (of the role's module) that handles it. */
export interface JetStreamBinding extends JetStreamConsumerOptions {
  handler: Type<JetStreamHandler>;
}

const DEFAULT_MAX_ACK_PENDING = 32;

interface Consumer {
  options: JetStreamConsumerOptions;
  handler: JetStreamHandler;
}

/**
 * The role's JetStream durable pull consumers, on its one NATS connection, in a plain
 * application context. Each message's JSON payload goes to its binding's handler with a
 * JetStreamContext; the outcome is settled per jetstream.settlement.ts: resolved → ack; payload
 * not JSON or a HeraldError that no retry can fix → term; anything else → nak with backoff.
 *
 * They start pulling at application bootstrap, once every module has initialised (StreamsService
 * has made the streams), and stop when NatsService drains, before the connection closes, so
 * in-flight handlers can still ack (see NatsService.beforeDrain).
 */
export class JetStreamConsumers implements OnApplicationBootstrap {
  private readonly logger = new Logger(JetStreamConsumers.name);
  private runners: ConsumerRunner[] = [];
  private readonly retries: BackgroundRetry[] = [];
  private closing: Promise<void> | null = null;

  constructor(
    private readonly nats: NatsService,
    private readonly consumers: Consumer[],
  ) {
    nats.beforeDrain(() => this.close());
  }

  async onApplicationBootstrap(): Promise<void> {
    const jsm = await this.nats.jetstreamManager();
    const js = this.nats.jetstream();
    const runners = await Promise.all(
      this.consumers.map(async ({ options, handler }) => {
        const maxAckPending = options.maxAckPending ?? DEFAULT_MAX_ACK_PENDING;
        const deferred = await whileJetStreamForms(
          `making the consumer ${options.stream}/${options.durable}`,
          () => ensureConsumer(jsm, options, maxAckPending),
          (message, delay) => this.logger.warn(`JetStream is not available yet (${message}); consumer ${options.durable} tries again in ${delay} ms`),
        );
        if (deferred) this.changeLater(options, maxAckPending, deferred);
        const retry = { ...DEFAULT_RETRY, ...options.retry };
        return new ConsumerRunner(options, maxAckPending, js, (m) => this.process(options, retry, handler, m), this.logger);
      }),
    );
    // Shut down while the consumers were being made: they never start.
    if (this.closing) return;
    this.runners = runners;
    runners.forEach((runner) => runner.start());
  }

  /**
   * A consumer that differs from this release's settings and that JetStream cannot change now (its
   * meta group leaderless): it is pulled with its current settings, and changed in the background.
   */
  private changeLater(options: JetStreamConsumerOptions, maxAckPending: number, deferred: DeferredChange): void {
    const name = `${options.stream}/${options.durable}`;
    if (this.closing) return;
    this.logger.warn(
      `consumer ${name} differs from this release's settings in ${deferred.changed.join(', ')}, but JetStream cannot change it now ` +
        `(${jetStreamMessage(deferred.error)}): pulling with its current settings, and trying again in the background`,
    );
    const retry = retryInBackground(
      async () => {
        const later = await ensureConsumer(await this.nats.jetstreamManager(), options, maxAckPending);
        if (later) return false;
        this.logger.log(`updated consumer ${name} (${deferred.changed.join(', ')})`);
        return true;
      },
      (error) => this.logger.error(`consumer ${name}: ${(error as Error).message}; not trying again until the next boot`),
    );
    this.retries.push(retry);
  }

  /** Stops pulling and waits for in-flight handlers to settle their messages. */
  close(): Promise<void> {
    for (const retry of this.retries.splice(0)) retry.stop();
    this.closing ??= Promise.all(this.runners.map((runner) => runner.stop())).then(() => undefined);
    return this.closing;
  }

  /** Messages being handled right now, per durable. */
  inFlight(): Record<string, number> {
    return Object.fromEntries(this.runners.map((runner) => [runner.durable, runner.inFlightCount]));
  }

  private async process(options: JetStreamConsumerOptions, retry: RetryPolicy, handler: JetStreamHandler, m: JsMsg): Promise<void> {
    let settlement: Settlement;
    try {
      await handler.handle(decodePayload(m.data), new JetStreamContext(m));
      settlement = ACK;
    } catch (error) {
      settlement = settlementForError(error, m.info.deliveryCount, retry);
    }
    this.settle(options, m, settlement);
  }

  private settle(options: JetStreamConsumerOptions, m: JsMsg, settlement: Settlement): void {
    // Built only to log: reading m.info parses the message's reply subject.
    const where = () => `${options.stream}/${options.durable} seq ${m.seq} (${m.subject}, delivery ${m.info.deliveryCount})`;
    try {
      switch (settlement.action) {
        case 'ack':
          m.ack();
          return;
        case 'nak':
          this.logger.warn(`retrying ${where()} in ${settlement.delayMs} ms: ${settlement.reason}`);
          m.nak(settlement.delayMs);
          return;
        case 'term':
          // Terminated messages are gone for good: log enough to find and replay them by hand.
          this.logger.error(`terminated poison message ${where()}: ${settlement.reason}`);
          m.term();
          return;
        default: {
          const unhandled: never = settlement;
          throw new Error(`unknown settlement ${JSON.stringify(unhandled)}`);
        }
      }
    } catch (error) {
      // The connection is gone; the server redelivers after ack_wait.
      this.logger.warn(`could not settle ${where()}: ${(error as Error).message}`);
    }
  }
}

/** The provider that runs `bindings`; list it, and each binding's handler, in the role's module. */
export function jetStreamConsumers(bindings: JetStreamBinding[]): Provider {
  return {
    provide: JetStreamConsumers,
    inject: [NatsService, ...bindings.map((b) => b.handler)],
    useFactory: (nats: NatsService, ...handlers: JetStreamHandler[]) =>
      new JetStreamConsumers(
        nats,
        bindings.map(({ handler: _type, ...options }, i) => ({ options, handler: handlers[i]! })),
      ),
  };
}
