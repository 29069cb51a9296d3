import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions } from '@herald/observability';
import { startRoleContext } from '@herald/runtime';
import { WebhookDispatchOptions } from '@herald/webhooks';
import { WebhooksModule } from './webhooks.module';

export { WEBHOOKS_DURABLE } from './webhooks.module';

/**
 * Starts the webhooks role: an application context consuming the region's events stream on the
 * role's one NATS connection. `dispatch` overrides the dispatcher's defaults (tests compress the
 * retry schedule). Closing stops the consumer (in-flight fan-outs settle) before NATS drains,
 * and the dispatcher drains its in-flight attempts before Postgres closes.
 */
export function startWebhooks(
  config: HeraldConfig,
  logging: LoggingOptions = {},
  dispatch: Partial<WebhookDispatchOptions> = {},
): Promise<INestApplicationContext> {
  return startRoleContext('webhooks', config, logging, (roleLogging) => WebhooksModule.forConfig(config, roleLogging, dispatch));
}
