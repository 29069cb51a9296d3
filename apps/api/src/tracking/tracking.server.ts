import { fastify, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { HeraldConfig } from '@herald/config';
import { httpServerOptions, installLoadShedding } from '@herald/http';
import type { MetricsService } from '@herald/observability';
import type { TrackingService } from '@herald/tracking';
import { installTrackingRoutes, NO_CACHE } from './tracking.routes';

export interface TrackingServer {
  port: number;
  /** Stops taking hits and waits for those in progress (their handover included). */
  close(): Promise<void>;
}

/**
 * The tracking host's own listener in the api role (TRACKING_LISTEN_PORT): the port an ingress
 * sends the tracking host names to (each domain's `track` CNAME), serving `/t/o/…` and `/t/c/…`
 * and nothing else. The same routes stay on API_PORT for links that reach it; here none of the
 * REST API's request hooks run (API key and rate limit, CSRF, JSON errors, request ids), only
 * load shedding, so an open or a click costs its token check, its classification and its share
 * of a publish, plus Fastify's own work. A burst of opens after a broadcast is the busiest traffic
 * Herald serves, and it is not the API's.
 */
export async function startTrackingServer(config: HeraldConfig, tracking: TrackingService, metrics: MetricsService): Promise<TrackingServer> {
  const server: FastifyInstance = fastify({
    logger: false,
    routerOptions: httpServerOptions.routerOptions,
    // The same proxies as the API's: the client's address classifies a hit (Apple's image proxy).
    trustProxy: config.API_TRUSTED_PROXIES.length ? config.API_TRUSTED_PROXIES : false,
  });
  const shed = metrics.counter('herald_tracking_requests_shed_total', 'Tracking hits refused with 503 because the process was over its capacity.', [
    'reason',
  ]);
  const shedder = installLoadShedding(server, {
    maxInFlight: config.API_MAX_IN_FLIGHT,
    maxEventLoopDelayMs: config.API_SHED_EVENT_LOOP_DELAY_MS,
    retryAfterSeconds: 1,
    exempt: () => false,
    onRefused: (reason) => shed.inc({ reason }),
  });
  installTrackingRoutes(server, tracking);
  server.setNotFoundHandler((_request, reply) => reply.code(404).headers(NO_CACHE).type('text/plain; charset=utf-8').send('Not found'));
  try {
    await server.listen({ host: config.API_HOST, port: config.TRACKING_LISTEN_PORT });
  } catch (error) {
    shedder.stop();
    await server.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`tracking server cannot listen on TRACKING_LISTEN_PORT ${config.TRACKING_LISTEN_PORT}: ${reason}`, { cause: error });
  }
  return {
    port: (server.server.address() as AddressInfo).port,
    close: async () => {
      shedder.stop();
      await server.close();
    },
  };
}
