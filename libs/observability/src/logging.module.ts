import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule, Params } from 'nestjs-pino';
import type { DestinationStream, Logger as PinoInstance } from 'pino';
import { createRoleLogger, httpLoggingOptions } from './logging.options';
import { OBSERVABILITY_CONFIG, ObservabilityConfig } from './observability.config';

export interface LoggingOptions {
  /** Where the JSON lines go instead of stdout; tests pass a stream they can read back. */
  destination?: DestinationStream;
  /** The role's root logger, when its boot made it already (see role-logs.ts); `destination` is then unused. */
  logger?: PinoInstance;
}

/**
 * nestjs-pino for one role. In an HTTP application its middleware logs each request; in an
 * application context (no HTTP) Nest never installs middleware, and the same logger serves the
 * role's own log lines. Wire it with `app.useLogger(app.get(Logger))`.
 *
 * nestjs-pino keeps its out-of-request logger in a module-level variable, set by the first
 * application built in the process: a role booted by `startRoleContext`/`startRoleHttp`
 * (@herald/runtime) runs under its own logger instead (role-logs.ts), so with several roles in a
 * process each line carries the role that wrote it. Request lines always use their own
 * application's logger.
 */
const QUIET_LEVELS = new Set(['warn', 'error', 'fatal', 'silent']);

@Module({})
export class LoggingModule {
  static forRole(role: string, options: LoggingOptions = {}): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          providers: [OBSERVABILITY_CONFIG.provider],
          inject: [OBSERVABILITY_CONFIG.token],
          useFactory: (config: ObservabilityConfig): Params => ({
            pinoHttp: httpLoggingOptions(options.logger ?? createRoleLogger(role, config, options.destination)),
            // Request lines are written at info. Above that level the per-request middleware
            // would log nothing yet cost ~90 µs a request (a fifth of the send path's CPU, measured
            // by test/bench/api-bench.ts), so it is not installed at all.
            ...(QUIET_LEVELS.has(config.LOG_LEVEL) && { forRoutes: [] }),
          }),
        }),
      ],
    };
  }
}
