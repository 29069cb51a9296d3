import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HeraldConfig } from '@herald/config';
import { Logger, LoggingOptions } from '@herald/observability';
import { WebhooksModule } from './webhooks.module';

/** Starts the webhooks role as an application context (no HTTP besides its ops port). */
export async function startWebhooks(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WebhooksModule.forConfig(config, logging), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  await app.init();
  return app;
}
