import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { ApiKeysService } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { postgresUnavailable } from '@herald/database';
import { configureHttp, httpServerOptions, installLoadShedding } from '@herald/http';
import { RateLimiter } from '@herald/limits';
import { installHttpMetrics, LoggingOptions, MetricsService, requestIdOptions } from '@herald/observability';
import { DashboardAuth, PeopleService, secureCookies, SignInLimiter } from '@herald/people';
import { startRoleHttp } from '@herald/runtime';
import { TrackingService } from '@herald/tracking';
import { BroadcastLinks, UnsubscribeService } from '@herald/broadcasts';
import { ImagesService } from '@herald/images';
import { ApiModule } from './api.module';
import { installApiKeyHook } from './auth/api-key.hook';
import { installMultipartParser } from './contacts/multipart';
import { installAuthRoute } from './dashboard/auth.route';
import { installCsrf } from './dashboard/csrf';
import { serveDashboard } from './dashboard/dashboard-static';
import { buildOpenApiDocument, OPENAPI_PATH } from './openapi/openapi.document';
import { installTrackingRoutes } from './tracking/tracking.routes';
import { startTrackingServer, type TrackingServer } from './tracking/tracking.server';
import { installUnsubscribeRoutes } from './broadcasts/unsubscribe.routes';
import { installImageRoutes } from './images/images.routes';

export interface ApiApp {
  app: NestFastifyApplication;
  /** The base URL the API listens on, e.g. http://127.0.0.1:3000 */
  url: string;
  /** The tracking host's own listener (TRACKING_LISTEN_PORT), null without one. */
  trackingUrl: string | null;
  /**
   * Stops taking requests, lets the in-flight ones finish, then shuts the role down. Nest's own
   * close() runs the modules' destroy hooks (Redis, NATS) before it closes the HTTP server,
   * which would cut in-flight sends off between their commit and their publish.
   */
  close(): Promise<void>;
}

/** Builds, starts and returns the API role. `API_PORT=0` picks a free port (tests). */
export function startApi(config: HeraldConfig, logging: LoggingOptions = {}): Promise<ApiApp> {
  const adapter = new FastifyAdapter({
    ...requestIdOptions,
    ...httpServerOptions,
    bodyLimit: config.API_BODY_LIMIT_BYTES,
    // Only the configured proxies' X-Forwarded-* headers: from anyone else they are the client's own words.
    trustProxy: config.API_TRUSTED_PROXIES.length ? config.API_TRUSTED_PROXIES : false,
  });
  const module = (roleLogging: LoggingOptions) => ApiModule.forConfig(config, roleLogging);
  return startRoleHttp('api', config, logging, { module, adapter, options: { bodyParser: false } }, async (app) => {
    configureHttp(app, postgresUnavailable);
    const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
    installMultipartParser(fastify);
    // First of the request hooks: a refusal costs no key lookup, no body and no query.
    const shed = app
      .get(MetricsService)
      .counter('herald_http_requests_shed_total', 'Requests refused with 503 because the process was over its capacity.', ['reason']);
    const shedder = installLoadShedding(fastify, {
      maxInFlight: config.API_MAX_IN_FLIGHT,
      maxEventLoopDelayMs: config.API_SHED_EVENT_LOOP_DELAY_MS,
      retryAfterSeconds: 1,
      exempt: (url) => url.startsWith('/health/'),
      onRefused: (reason) => shed.inc({ reason }),
    });
    installCsrf(fastify, secureCookies(config));
    installAuthRoute(fastify, app.get(DashboardAuth), app.get(SignInLimiter), app.get(PeopleService), config.HERALD_REGIONS);
    installApiKeyHook(app.getHttpAdapter().getInstance(), app.get(ApiKeysService), app.get(RateLimiter), config);
    installHttpMetrics(app.getHttpAdapter().getInstance(), app.get(MetricsService));
    installTrackingRoutes(fastify, app.get(TrackingService));
    installUnsubscribeRoutes(fastify, app.get(UnsubscribeService));
    installImageRoutes(fastify, app.get(ImagesService));
    serveOpenApi(app, config);
    await serveDashboard(app);
    await app.listen({ port: config.API_PORT, host: config.API_HOST });
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : config.API_PORT;
    const host = config.API_HOST === '0.0.0.0' || config.API_HOST === '::' ? '127.0.0.1' : config.API_HOST;
    await app.get(DashboardAuth).start(`http://${host}:${port}`);
    app.get(BroadcastLinks).start(`http://${host}:${port}`);
    let tracking: TrackingServer | null = null;
    if (config.TRACKING_LISTEN_PORT !== undefined) {
      try {
        tracking = await startTrackingServer(config, app.get(TrackingService), app.get(MetricsService));
      } catch (error) {
        shedder.stop();
        await app.close();
        throw error;
      }
    }
    const close = async () => {
      // The tracking host first: its hits are handed to TrackingService, which drains them as the app closes.
      await tracking?.close();
      shedder.stop();
      await app.getHttpAdapter().getInstance().close();
      await app.close();
    };
    return { app, url: `http://${host}:${port}`, trackingUrl: tracking ? `http://${host}:${tracking.port}` : null, close };
  });
}

function serveOpenApi(app: NestFastifyApplication, config: HeraldConfig): void {
  const document = buildOpenApiDocument(app, config);
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  fastify.get(OPENAPI_PATH, (_request, reply) => reply.type('application/json').send(document));
}
