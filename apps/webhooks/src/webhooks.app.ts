import { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { eventsStreamName, eventSubjects, JetStreamExceptionFilter, JetStreamServer } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { Logger, LoggingOptions } from '@herald/observability';
import { WebhookDispatchOptions } from '@herald/webhooks';
import { WEBHOOK_EVENTS_PATTERN } from './webhook-events.handler';
import { WebhooksModule } from './webhooks.module';

/** Shared by every webhooks process of the region, so they split the events between them. */
export const WEBHOOKS_DURABLE = 'webhooks';

/**
 * Starts the webhooks role: a Nest microservice over JetStream (no HTTP besides its ops port)
 * consuming the region's events stream. `dispatch` overrides the dispatcher's defaults (tests
 * compress the retry schedule). Closing stops the consumer (in-flight fan-outs settle), then the
 * dispatcher drains its in-flight attempts before Postgres closes.
 */
export async function startWebhooks(
  config: HeraldConfig,
  logging: LoggingOptions = {},
  dispatch: Partial<WebhookDispatchOptions> = {},
): Promise<INestMicroservice> {
  const server = new JetStreamServer({
    nats: { servers: config.NATS_URL, name: `herald-webhooks-${config.HERALD_REGION}` },
    consumers: [
      {
        stream: eventsStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
        durable: WEBHOOKS_DURABLE,
        filterSubject: eventSubjects(config.NATS_NAMESPACE, config.HERALD_REGION),
        pattern: WEBHOOK_EVENTS_PATTERN,
        maxAckPending: 256,
      },
    ],
  });
  const app = await NestFactory.createMicroservice(WebhooksModule.forConfig(config, logging, dispatch), { strategy: server, bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new JetStreamExceptionFilter());
  await app.listen();
  return app;
}
