import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HeraldConfig } from '@herald/config';
import { Logger, LoggingOptions } from '@herald/observability';
import { WorkerModule } from './worker.module';

/** Starts the worker role as an application context (no HTTP besides its ops port). */
export async function startWorker(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forConfig(config, logging), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  await app.init();
  return app;
}
