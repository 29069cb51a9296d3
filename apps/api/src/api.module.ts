import { DynamicModule, Module } from '@nestjs/common';
import { AccountsModule } from '@herald/accounts';
import { jetStreamConsumers, trackingHitsSubject, trackingStreamName } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { DomainsModule, DomainVerificationListener, DomainVerificationModule } from '@herald/domains';
import { EmailsModule } from '@herald/emails';
import { InsightsModule } from '@herald/insights';
import { DispatchReconcilerModule, MessagesModule } from '@herald/messages';
import { IdempotencyPurgerModule } from '@herald/idempotency';
import { LimitsModule } from '@herald/limits';
import { LoggingOptions, ObservabilityHttpModule, OpsServerModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { WebhooksModule } from '@herald/webhooks';
import { SuppressionsModule } from '@herald/suppressions';
import { ContactImportRunnerModule, ContactsModule } from '@herald/contacts';
import { PeopleModule } from '@herald/people';
import { TrackingModule } from '@herald/tracking';
import { MetricsModule } from '@herald/metrics';
import { BroadcastFanOutModule, BroadcastsModule } from '@herald/broadcasts';
import { ImagesModule } from '@herald/images';
import { DASHBOARD_CONTROLLERS, DashboardGuard } from './dashboard/dashboard.controllers';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { ApiKeyGuard } from './auth/api-key.guard';
import { DomainsController } from './domains/domains.controller';
import { EmailsController } from './emails/emails.controller';
import { WebhooksController } from './webhooks/webhooks.controller';
import { SuppressionsController } from './suppressions/suppressions.controller';
import { StatsController } from './stats/stats.controller';
import { BroadcastsController } from './broadcasts/broadcasts.controller';
import { AudiencesController } from './contacts/audiences.controller';
import { ContactImportsController } from './contacts/contact-imports.controller';
import { ContactsController } from './contacts/contacts.controller';
import { SegmentsController } from './contacts/segments.controller';
import { ContactPropertiesController, TopicsController } from './contacts/topics.controller';
import { TrackingHitsHandler } from './tracking/tracking-hits.handler';

/** Shared by every api process of the region, so they split the hits between them. */
export const TRACKING_DURABLE = 'tracking-recorder';
/**
 * Messages (each up to 128 hits) held at once: what arrives while a transaction runs (and lingers)
 * shares the next one. Small enough that a recorder deferring during a burst (RecorderPace) stops
 * pulling after a few thousand hits: every message pulled is parsed and validated on arrival, on
 * the thread answering the burst, so a window of 1,024 cost the redirects ~25–30 µs of CPU each
 * (tracking bench). Large enough for a catch-up in transactions of thousands of hits.
 */
const TRACKING_MAX_ACK_PENDING = 128;

/**
 * The REST API role: Resend-compatible endpoints and the tracking host, plus the background work
 * of its region: the dispatch reconciler, the idempotency purge, domain verification, the
 * broadcasts' fan-out and the recording of tracking hits (the consumer of the region's tracking
 * stream: the role that answers the hits records them, so a deployment needs no other role for
 * opens and clicks).
 */
@Module({})
export class ApiModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        RuntimeModule.forRole('api', config, logging),
        ObservabilityHttpModule,
        // Metrics on the ops port, never on the public API port.
        OpsServerModule,
        AccountsModule,
        LimitsModule,
        EmailsModule,
        InsightsModule,
        DomainsModule,
        SuppressionsModule,
        ContactsModule,
        ContactImportRunnerModule,
        DomainVerificationModule.forRoot({ imports: [DomainsModule], listener: DomainVerificationListener }),
        DispatchReconcilerModule,
        IdempotencyPurgerModule,
        WebhooksModule,
        PeopleModule,
        MessagesModule,
        TrackingModule,
        MetricsModule,
        BroadcastsModule,
        BroadcastFanOutModule,
        ImagesModule,
      ],
      controllers: [
        EmailsController,
        ApiKeysController,
        DomainsController,
        SuppressionsController,
        WebhooksController,
        StatsController,
        BroadcastsController,
        ContactImportsController,
        ContactsController,
        SegmentsController,
        AudiencesController,
        TopicsController,
        ContactPropertiesController,
        ...DASHBOARD_CONTROLLERS,
      ],
      providers: [
        ApiKeyGuard,
        DashboardGuard,
        TrackingHitsHandler,
        jetStreamConsumers([
          {
            stream: trackingStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
            durable: TRACKING_DURABLE,
            filterSubject: trackingHitsSubject(config.NATS_NAMESPACE, config.HERALD_REGION),
            handler: TrackingHitsHandler,
            maxAckPending: TRACKING_MAX_ACK_PENDING,
          },
        ]),
      ],
    };
  }
}
