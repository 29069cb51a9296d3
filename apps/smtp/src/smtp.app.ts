import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HeraldConfig } from '@herald/config';
import { Logger, LoggingOptions } from '@herald/observability';
import { SmtpModule } from './smtp.module';

/** Starts the smtp role as an application context (no HTTP besides its ops port). */
export async function startSmtp(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(SmtpModule.forConfig(config, logging), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  await app.init();
  return app;
}
