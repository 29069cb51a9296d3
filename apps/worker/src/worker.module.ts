import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { DeliveryModule } from '@herald/delivery';
import { DispatchReconcilerModule } from '@herald/messages';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { SendHandler } from './send.handler';

/** The sender-actor role: consumes its region's send stream and delivers to recipients' MX hosts. */
@Module({})
export class WorkerModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: WorkerModule,
      // The reconciler also runs here: retries and crashed workers' leases come due even while the
      // region's API is down.
      imports: [RuntimeModule.forRole('worker', config, logging), OpsServerModule, DeliveryModule, DispatchReconcilerModule],
      controllers: [SendHandler],
    };
  }
}
