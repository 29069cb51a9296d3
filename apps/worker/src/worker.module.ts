import { DynamicModule, Module } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';

/** The sender-actor role. It will consume its region's send stream and deliver to recipients' MX (the delivery engine work); today it runs its runtime, health and metrics. */
@Module({})
export class WorkerModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return { module: WorkerModule, imports: [RuntimeModule.forRole('worker', config, logging), OpsServerModule] };
  }
}
