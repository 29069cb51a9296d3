import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions } from '@herald/observability';
import { startRoleContext } from '@herald/runtime';
import { WorkerModule } from './worker.module';

export { SENDERS_DURABLE } from './worker.module';

/**
 * Starts the worker role: an application context consuming the region's send stream into the
 * sender pipeline, on the role's one NATS connection. On close, the consumer stops pulling and
 * the transmitter hands back queued jobs and finishes in-flight SMTP transactions, all before
 * NATS drains, so every outcome is recorded and every finished command acked.
 */
export function startWorker(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplicationContext> {
  return startRoleContext('worker', config, logging, (roleLogging) => WorkerModule.forConfig(config, roleLogging));
}
