import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { JetStreamExceptionFilter, JetStreamServer, NatsService, sendStreamName, sendSubject } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { Logger, LoggingOptions } from '@herald/observability';
import { SEND_PATTERN } from './send.handler';
import { WorkerModule } from './worker.module';

/** Shared by every worker of the region, so they split the send stream between them. */
export const SENDERS_DURABLE = 'senders';

/**
 * Starts the worker role: the region's send stream consumed into the sender pipeline. A hybrid
 * Nest app (its HTTP side never listens; the ops port serves health and metrics) so the consumer
 * shares the role's NATS connection: on close, the consumer stops pulling and the transmitter
 * hands back queued jobs and finishes in-flight SMTP transactions, all before NATS drains, so
 * every outcome is recorded and every finished command acked.
 */
export async function startWorker(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create(WorkerModule.forConfig(config, logging), new FastifyAdapter(), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  const server = new JetStreamServer({
    nats: app.get(NatsService),
    consumers: [
      {
        stream: sendStreamName(config.NATS_NAMESPACE, config.HERALD_REGION),
        durable: SENDERS_DURABLE,
        filterSubject: sendSubject(config.NATS_NAMESPACE, config.HERALD_REGION),
        pattern: SEND_PATTERN,
        maxAckPending: config.DELIVERY_CONCURRENCY,
        // Commands are acked once claimed (milliseconds after delivery): this only bounds how
        // long the commands a dead worker had pulled, unclaimed, wait before another takes them.
        ackWaitMs: 15_000,
      },
    ],
  });
  app.connectMicroservice({ strategy: server });
  app.useGlobalFilters(new JetStreamExceptionFilter());
  await app.init();
  await app.startAllMicroservices();
  return app;
}
