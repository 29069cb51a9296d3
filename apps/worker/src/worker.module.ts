import { DynamicModule, Module } from '@nestjs/common';
import { jetStreamConsumers, sendChunkSubject, sendStreamName, sendSubject } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { DeliveryModule, DeliveryService } from '@herald/delivery';
import { DispatchReconcilerModule } from '@herald/messages';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { SendChunkHandler } from './send-chunk.handler';
import { SendHandler } from './send.handler';

/** Shared by every worker of the region, so they split the send stream between them. */
export const SENDERS_DURABLE = 'senders';
/** The same for send chunks (a broadcast's emails, one message per chunk): a consumer of its own on the chunk subject. */
export const SENDER_CHUNKS_DURABLE = 'sender-chunks';
/** Send chunks being claimed at once (the chunk consumer's max_ack_pending); each gets its share of DELIVERY_CONCURRENCY. */
export const CHUNKS_AT_ONCE = 4;

/** The sender-actor role: consumes its region's send stream and delivers to recipients' MX hosts. */
@Module({})
export class WorkerModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: WorkerModule,
      // The reconciler also runs here: retries and crashed workers' leases come due even while the
      // region's API is down.
      imports: [RuntimeModule.forRole('worker', config, logging), OpsServerModule, DeliveryModule, DispatchReconcilerModule],
      providers: [
        SendHandler,
        {
          provide: SendChunkHandler,
          useFactory: (delivery: DeliveryService) =>
            new SendChunkHandler(delivery, Math.max(1, Math.floor(config.DELIVERY_CONCURRENCY / CHUNKS_AT_ONCE))),
          inject: [DeliveryService],
        },
        jetStreamConsumers([
          {
            stream: sendStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
            durable: SENDERS_DURABLE,
            filterSubject: sendSubject(config.NATS_NAMESPACE, config.HERALD_REGION),
            handler: SendHandler,
            maxAckPending: config.DELIVERY_CONCURRENCY,
            // Commands are acked once claimed (milliseconds after delivery): this only bounds how
            // long the commands a dead worker had pulled, unclaimed, wait before another takes them.
            ackWaitMs: 15_000,
          },
          {
            stream: sendStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
            durable: SENDER_CHUNKS_DURABLE,
            filterSubject: sendChunkSubject(config.NATS_NAMESPACE, config.HERALD_REGION),
            handler: SendChunkHandler,
            maxAckPending: CHUNKS_AT_ONCE,
            // Acked once all its emails are claimed; the handler resets the timer while it claims.
            ackWaitMs: 15_000,
          },
        ]),
      ],
    };
  }
}
