import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions } from '@herald/observability';
import { startRoleContext } from '@herald/runtime';
import { MetricsRoleModule } from './metrics.module';

export { METRICS_DURABLE } from './metrics.module';

/**
 * Starts the metrics role: an application context consuming the region's events stream into
 * the rollups. Closing stops the consumer (in-flight batches commit and ack) before NATS drains.
 */
export function startMetrics(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplicationContext> {
  return startRoleContext('metrics', config, logging, (roleLogging) => MetricsRoleModule.forConfig(config, roleLogging));
}
