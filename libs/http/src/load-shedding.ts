import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { HeraldError } from '@herald/core';
import { sendError } from './herald-exception.filter';

export interface LoadSheddingOptions {
  /** Requests being served at once past which a new one is refused (0: no limit). */
  maxInFlight: number;
  /** Mean event-loop delay over the last window past which new requests are refused (0: not watched). */
  maxEventLoopDelayMs: number;
  /** The `Retry-After` of a refusal. */
  retryAfterSeconds: number;
  /** Paths never refused (health probes): a busy process is still alive and ready. */
  exempt: (url: string) => boolean;
  /** Told of every refusal (a metric). */
  onRefused?: (reason: RefusalReason) => void;
  /** How often the event-loop delay is read. */
  windowMs?: number;
}

export type RefusalReason = 'in_flight' | 'event_loop';

/** What the shedder refused and why, for tests and metrics. */
export interface LoadShedder {
  readonly refused: Record<RefusalReason, number>;
  inFlight(): number;
  stop(): void;
}

const WINDOW_MS = 250;

/**
 * Admission at the door. Past its capacity a process that keeps accepting only queues: every
 * request waits longer, the latency of all of them passes any budget, and clients time out on
 * requests that were then done anyway. Refusing the excess at once, before a key is looked up or
 * a body parsed, keeps the admitted requests fast and tells the others to come back (503
 * `service_unavailable` with `Retry-After`); nothing refused here was persisted, so a retry is safe.
 *
 * Two signals: requests in flight (a slow Postgres shows here first) and the event loop's mean
 * delay over the last window (a saturated CPU shows here: requests wait in the loop before
 * Fastify sees them, where no counter can).
 */
export function installLoadShedding(fastify: Pick<FastifyInstance, 'addHook'>, options: LoadSheddingOptions): LoadShedder {
  let inFlight = 0;
  let loopBusy = false;
  const refused: Record<RefusalReason, number> = { in_flight: 0, event_loop: 0 };
  let histogram: IntervalHistogram | null = null;
  let timer: NodeJS.Timeout | null = null;
  if (options.maxEventLoopDelayMs > 0) {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    histogram = loop;
    timer = setInterval(() => {
      loopBusy = loop.mean / 1e6 > options.maxEventLoopDelayMs;
      loop.reset();
    }, options.windowMs ?? WINDOW_MS);
    timer.unref();
  }

  const refuse = (reason: RefusalReason, why: string) => {
    refused[reason]++;
    options.onRefused?.(reason);
    return new HeraldError(
      'service_unavailable',
      `Herald is over its capacity right now (${why}); nothing was done. Retry after the Retry-After seconds.`,
      options.retryAfterSeconds,
    );
  };

  fastify.addHook('onRequest', (request, reply, done) => {
    if (options.exempt(request.url)) return done();
    if (options.maxInFlight > 0 && inFlight >= options.maxInFlight)
      return void sendError(reply, refuse('in_flight', `${inFlight} requests in progress`));
    if (loopBusy) return void sendError(reply, refuse('event_loop', 'its event loop is saturated'));
    inFlight++;
    // 'close' fires once per response, answered or aborted by the client.
    reply.raw.once('close', () => inFlight--);
    done();
  });

  return {
    refused,
    inFlight: () => inFlight,
    stop: () => {
      if (timer) clearInterval(timer);
      histogram?.disable();
    },
  };
}
