import type { FastifyInstance } from 'fastify';
import { MetricsService } from './metrics.service';

export const HTTP_DURATION_METRIC = 'herald_http_request_duration_seconds';

/** Requests Fastify routed nowhere (404s, scanners) share one label instead of one per raw URL. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * Records every response of an HTTP role in one histogram. Call it before `app.listen()` (or
 * `app.init()`): Fastify refuses new hooks once it is ready.
 */
export function installHttpMetrics(fastify: Pick<FastifyInstance, 'addHook'>, metrics: MetricsService): void {
  const duration = metrics.histogram(HTTP_DURATION_METRIC, 'Time to answer an HTTP request, by route pattern.', ['method', 'route', 'status']);
  fastify.addHook('onResponse', async (request, reply) => {
    // The route pattern (`/emails/:id`), never the URL, keeps the series count bounded.
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    duration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
}
