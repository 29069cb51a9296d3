import type { LoggerService } from '@nestjs/common';
import { Logger, PinoLogger } from 'nestjs-pino';
// nestjs-pino's async-local store: what its PinoLogger writes to (a request's logger inside a
// request, else the process's first logger). Not re-exported by its index, hence the path.
import { storage, Store } from 'nestjs-pino/storage';
import type { Logger as PinoInstance } from 'pino';
import type { HeraldConfig } from '@herald/config';
import type { LoggingOptions } from './logging.module';
import { createRoleLogger } from './logging.options';

/**
 * The logs of one role. Nest's `Logger` (what every lib's `new Logger(Context)` writes through)
 * is one per process, so with several roles in a process (`herald all`) it cannot know from
 * itself which role a line belongs to. `run` makes the role's logger the async-local default for
 * everything started inside it: the role's boot, and so its timers, consumers and servers; and
 * its shutdown. Pass `nest` as the application's `logger` option: no buffering, no second
 * application's options (`logger: false`) can silence the others.
 */
export interface RoleLogs {
  /** The role's root pino logger; also the one its HTTP request lines are written with. */
  readonly logger: PinoInstance;
  /** For `NestFactory.create*(module, { logger })`. */
  readonly nest: LoggerService;
  run<T>(work: () => T): T;
}

export function roleLogs(role: string, config: Pick<HeraldConfig, 'LOG_LEVEL' | 'HERALD_REGION'>, options: LoggingOptions = {}): RoleLogs {
  const logger = options.logger ?? createRoleLogger(role, config, options.destination);
  const pino = new PinoLogger({ pinoHttp: { logger } });
  // Outside any store, nestjs-pino writes with the first logger made in the process. The role
  // that owns it (the only role of a `herald worker` process, the first of `herald all`) enters
  // no store, which keeps async_hooks off its hot paths: the worker and, at quiet log levels,
  // the API enter none otherwise.
  const ownsFallback = storage.getStore() === undefined && pino.logger === logger;
  return {
    logger,
    nest: new Logger(pino, {}),
    run: (work) => (ownsFallback ? work() : storage.run(new Store(logger), work)),
  };
}
