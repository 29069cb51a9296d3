import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { connect, NatsConnection, NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstreamManager, JsMsg } from '@nats-io/jetstream';
import { lastValueFrom } from 'rxjs';
import { NatsService } from './nats.service';
import { ConsumerRunner, ensureConsumer, JetStreamConsumerOptions } from './jetstream.consumer';
import { JetStreamContext } from './jetstream.context';
import { ACK, decodePayload, DEFAULT_RETRY, RetryPolicy, Settlement, settlementForError } from './jetstream.settlement';

export interface JetStreamServerOptions {
  /** The role's NatsService (shares its connection) or options for a connection of the server's own. */
  nats: NatsService | NodeConnectionOptions;
  consumers: JetStreamConsumerOptions[];
}

export type JetStreamStatus = 'connected' | 'disconnected' | 'reconnecting';

// Listener signatures are what `on()` callers pass; Function keeps Server's constraint satisfied.
export type JetStreamServerEvents = {
  error: (error: Error) => void;
  disconnect: (server: string) => void;
  reconnect: (server: string) => void;
};

const DEFAULT_MAX_ACK_PENDING = 32;

interface Subscription {
  options: JetStreamConsumerOptions;
  runner: ConsumerRunner;
}

/**
 * A Nest microservice transport over JetStream durable pull consumers. Each message's JSON
 * payload goes to the `@EventPattern(pattern)` handler of its consumer, with a JetStreamContext
 * as `@Ctx()`; the outcome is settled by `settle()` per jetstream.settlement.ts: resolved → ack;
 * payload not JSON or a HeraldError that no retry can fix → term; anything else → nak with backoff.
 *
 * The roles run it through JetStreamConsumers (jetstream.consumers.ts), in an application
 * context. As a Nest microservice strategy, register JetStreamExceptionFilter on the
 * microservice, or Nest hides handler errors; with a shared NatsService, call `app.init()`
 * before `startAllMicroservices()`: the streams are made by StreamsService at init.
 */
export class JetStreamServer extends Server<JetStreamServerEvents, JetStreamStatus> implements CustomTransportStrategy {
  protected override readonly logger = new Logger(JetStreamServer.name);
  private readonly emitter = new EventEmitter();
  private nc: NatsConnection | null = null;
  private subscriptions: Subscription[] = [];
  private closing: Promise<void> | null = null;

  constructor(private readonly options: JetStreamServerOptions) {
    super();
  }

  async listen(callback: (...optionalParams: unknown[]) => unknown): Promise<void> {
    try {
      const handlers = this.options.consumers.map((consumer) => this.handlerFor(consumer));
      const nc = await this.connect();
      const jsm = await jetstreamManager(nc);
      const js = jsm.jetstream();
      this.subscriptions = await Promise.all(
        this.options.consumers.map(async (options, i) => {
          const maxAckPending = options.maxAckPending ?? DEFAULT_MAX_ACK_PENDING;
          await ensureConsumer(jsm, options, maxAckPending);
          const retry = { ...DEFAULT_RETRY, ...options.retry };
          const handle = (m: JsMsg) => this.process(options, retry, handlers[i], m);
          return { options, runner: new ConsumerRunner(options, maxAckPending, js, handle, this.logger) };
        }),
      );
      if (this.closing) throw new Error('closed while starting');
      this.subscriptions.forEach((s) => s.runner.start());
      this._status$.next('connected');
      callback();
    } catch (error) {
      await this.close().catch(() => undefined);
      // close() may have run before the connection existed.
      await this.releaseConnection();
      callback(error);
    }
  }

  /** Stops pulling, waits for in-flight handlers to settle their messages, then lets go of NATS. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  on<K extends keyof JetStreamServerEvents = keyof JetStreamServerEvents, C extends JetStreamServerEvents[K] = JetStreamServerEvents[K]>(
    event: K,
    callback: C,
  ): void {
    this.emitter.on(event, callback);
  }

  unwrap<T>(): T {
    if (!this.nc) throw new Error('Not initialized. Call listen()/startAllMicroservices() before unwrap().');
    return this.nc as T;
  }

  /** Messages being handled right now, per durable (for tests and metrics). */
  inFlight(): Record<string, number> {
    return Object.fromEntries(this.subscriptions.map((s) => [s.options.durable, s.runner.inFlightCount]));
  }

  private handlerFor(consumer: JetStreamConsumerOptions): MessageHandler {
    const handler = this.getHandlerByPattern(consumer.pattern);
    if (!handler) throw new Error(`no @EventPattern('${consumer.pattern}') handler for consumer ${consumer.durable}`);
    return handler;
  }

  private async connect(): Promise<NatsConnection> {
    const { nats } = this.options;
    if (nats instanceof NatsService) {
      this.nc = await nats.connect();
      // NatsService drains on module destroy, which Nest runs before closing microservices.
      nats.beforeDrain(() => this.close());
    } else {
      this.nc = await connect({ maxReconnectAttempts: -1, ...nats });
    }
    void this.watchStatus(this.nc);
    return this.nc;
  }

  private async process(options: JetStreamConsumerOptions, retry: RetryPolicy, handler: MessageHandler, m: JsMsg): Promise<void> {
    let settlement: Settlement;
    try {
      const payload = decodePayload(m.data);
      // Nest's proxy turns a thrown error into an erroring Observable, so subscribe to see it.
      const result = await handler(payload, new JetStreamContext([m]));
      await lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
      settlement = ACK;
    } catch (error) {
      settlement = settlementForError(error, m.info.deliveryCount, retry);
    }
    this.settle(options, m, settlement);
  }

  private settle(options: JetStreamConsumerOptions, m: JsMsg, settlement: Settlement): void {
    const where = `${options.stream}/${options.durable} seq ${m.seq} (${m.subject}, delivery ${m.info.deliveryCount})`;
    try {
      switch (settlement.action) {
        case 'ack':
          m.ack();
          return;
        case 'nak':
          this.logger.warn(`retrying ${where} in ${settlement.delayMs} ms: ${settlement.reason}`);
          m.nak(settlement.delayMs);
          return;
        case 'term':
          // Terminated messages are gone for good: log enough to find and replay them by hand.
          this.logger.error(`terminated poison message ${where}: ${settlement.reason}`);
          m.term();
          return;
        default: {
          const unhandled: never = settlement;
          throw new Error(`unknown settlement ${JSON.stringify(unhandled)}`);
        }
      }
    } catch (error) {
      // The connection is gone; the server redelivers after ack_wait.
      this.logger.warn(`could not settle ${where}: ${(error as Error).message}`);
    }
  }

  private async shutdown(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.runner.stop()));
    await this.releaseConnection();
    this._status$.next('disconnected');
  }

  /** Pushes out the last acks; a connection of our own is drained, a shared one is left to NatsService. */
  private async releaseConnection(): Promise<void> {
    const nc = this.nc;
    if (!nc || nc.isClosed() || nc.isDraining()) return;
    if (this.options.nats instanceof NatsService) await nc.flush().catch(() => undefined);
    else await nc.drain();
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      switch (status.type) {
        case 'disconnect':
          this._status$.next('disconnected');
          this.emitter.emit('disconnect', status.server);
          break;
        case 'reconnecting':
          this._status$.next('reconnecting');
          break;
        case 'reconnect':
          this._status$.next('connected');
          this.emitter.emit('reconnect', status.server);
          break;
        case 'error':
          if (this.emitter.listenerCount('error')) this.emitter.emit('error', status.error);
          break;
        default:
          break;
      }
    }
  }
}
