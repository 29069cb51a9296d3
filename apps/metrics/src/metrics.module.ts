import { DynamicModule, Module } from '@nestjs/common';
import { eventsStreamName, eventSubjects, jetStreamConsumers } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { RollupsModule } from '@herald/metrics';
import { LoggingOptions, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { MetricsEventsHandler } from './metrics-events.handler';

/** Shared by every metrics process of the region, so they split the events between them. */
export const METRICS_DURABLE = 'metrics';

/**
 * Events held at once: the rollups batch what arrives while a transaction runs, so a deep
 * window is what lets a backlog go by in large transactions.
 */
const MAX_ACK_PENDING = 4096;

/**
 * The metrics role: counts its region's events into hourly rollups and runs the reputation
 * guardrail. A role of its own, not a second consumer in the webhooks role: it scales and fails
 * apart from customer-facing webhook delivery (a rollup backlog never delays a webhook, a slow
 * endpoint never delays the guardrail), and it wants a much deeper ack window than webhooks do.
 */
@Module({})
export class MetricsRoleModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: MetricsRoleModule,
      imports: [RuntimeModule.forRole('metrics', config, logging), OpsServerModule, RollupsModule],
      providers: [
        MetricsEventsHandler,
        jetStreamConsumers([
          {
            stream: eventsStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
            durable: METRICS_DURABLE,
            filterSubject: eventSubjects(config.NATS_NAMESPACE, config.HERALD_REGION),
            handler: MetricsEventsHandler,
            maxAckPending: MAX_ACK_PENDING,
            ackWaitMs: config.METRICS_ACK_WAIT_MS,
          },
        ]),
      ],
    };
  }
}
