import { DynamicModule, Module } from '@nestjs/common';
import { jetStreamConsumers, sendStreamName, sendSubject } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { DeliveryModule } from '@herald/delivery';
import { DispatchReconcilerModule } from '@herald/messages';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { SendHandler } from './send.handler';

/** Shared by every worker of the region, so they split the send stream between them. */
export const SENDERS_DURABLE = 'senders';

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
        ]),
      ],
    };
  }
}
