import { DynamicModule, INestApplicationContext, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions, roleLogs } from '@herald/observability';
import { Role } from './roles';

/** The role's root module, given the logging options it must pass to `RuntimeModule.forRole`. */
export type RoleModule = (logging: LoggingOptions) => DynamicModule;

/**
 * Every role boots here, as a Nest application context under its own logs (role-logs.ts in
 * @herald/observability). Its listeners and JetStream consumers start at application
 * bootstrap; `close()` runs the drain order of NatsService.beforeDrain.
 */
export function startRoleContext(role: Role, config: HeraldConfig, logging: LoggingOptions, module: RoleModule): Promise<INestApplicationContext> {
  const logs = roleLogs(role, config, logging);
  return logs.run(() => NestFactory.createApplicationContext(module({ ...logging, logger: logs.logger }), { logger: logs.nest }));
}

/**
 * The same for a role that serves HTTP: the context plus Fastify. `serve` configures and listens
 * (still under the role's logs, so its request handling inherits them).
 */
export function startRoleHttp<T>(
  role: Role,
  config: HeraldConfig,
  logging: LoggingOptions,
  http: { module: RoleModule; adapter: FastifyAdapter; options?: NestApplicationOptions },
  serve: (app: NestFastifyApplication) => Promise<T>,
): Promise<T> {
  const logs = roleLogs(role, config, logging);
  return logs.run(async () => {
    const module = http.module({ ...logging, logger: logs.logger });
    const app = await NestFactory.create<NestFastifyApplication>(module, http.adapter, { ...http.options, logger: logs.nest });
    return serve(app);
  });
}
