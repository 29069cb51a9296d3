import { OnApplicationBootstrap, Provider, Type } from '@nestjs/common';
import type { JetStreamConsumerOptions } from './jetstream.consumer';
import { JetStreamContext } from './jetstream.context';
import { JetStreamServer } from './jetstream.server';
import { NatsService } from './nats.service';

/**
 * What a consumer's messages go to: validates the payload, calls one service method. Resolving
 * acks the message; throwing settles it per jetstream.settlement.ts (term or nak).
 */
export interface JetStreamHandler {
  handle(payload: unknown, context: JetStreamContext): Promise<void>;
}

/** One durable consumer of the role and the provider (of the role's module) that handles it. */
export interface JetStreamBinding extends Omit<JetStreamConsumerOptions, 'pattern'> {
  handler: Type<JetStreamHandler>;
}

/**
 * The role's JetStream consumers, on its one NATS connection, in a plain application context
 * (no Nest microservice): they start pulling at application bootstrap, once every module has
 * initialised (StreamsService has made the streams), and stop when NatsService drains, before
 * the connection closes, so in-flight handlers can still ack (see NatsService.beforeDrain).
 */
export class JetStreamConsumers implements OnApplicationBootstrap {
  private readonly server: JetStreamServer;

  constructor(nats: NatsService, bindings: { binding: JetStreamBinding; handler: JetStreamHandler }[]) {
    this.server = new JetStreamServer({
      nats,
      consumers: bindings.map(({ binding: { handler: _type, ...options } }) => ({ ...options, pattern: options.durable })),
    });
    for (const { binding, handler } of bindings) {
      this.server.addHandler(binding.durable, (payload: unknown, context: JetStreamContext) => handler.handle(payload, context), true);
    }
  }

  onApplicationBootstrap(): Promise<void> {
    return new Promise((resolve, reject) => {
      void this.server.listen((error?: unknown) => (error ? reject(error as Error) : resolve()));
    });
  }

  /** Messages being handled right now, per durable. */
  inFlight(): Record<string, number> {
    return this.server.inFlight();
  }
}

/** The provider that runs `bindings`; list it, and each binding's handler, in the role's module. */
export function jetStreamConsumers(bindings: JetStreamBinding[]): Provider {
  return {
    provide: JetStreamConsumers,
    inject: [NatsService, ...bindings.map((b) => b.handler)],
    useFactory: (nats: NatsService, ...handlers: JetStreamHandler[]) =>
      new JetStreamConsumers(nats, bindings.map((binding, i) => ({ binding, handler: handlers[i]! }))),
  };
}
