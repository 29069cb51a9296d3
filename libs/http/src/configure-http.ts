import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { HeraldError } from '@herald/core';
import { HeraldExceptionFilter } from './herald-exception.filter';
import { parseJsonBody } from './json-body.parser';
import { SECURITY_HEADERS } from './server-options';

interface KnownRoute {
  method: string;
  pattern: RegExp;
}

/** `/emails/:id` → /^\/emails\/[^/]+$/ so a wrong verb on a known path can be told from a wrong path. */
function routePattern(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * The HTTP behaviour every Herald API shares, as Resend's clients expect it:
 * - JSON bodies (parseJsonBody: depth-limited, NUL-free), including an empty body sent with
 *   `Content-Type: application/json` (the SDK does that for cancel/verify/delete);
 * - 404 `not_found` for an unknown path, 405 `method_not_allowed` with `Allow` for a known path
 *   with the wrong verb, both as Resend error bodies;
 * - SECURITY_HEADERS on every response;
 * - every error through HeraldExceptionFilter, `translateError` first for a backing service's
 *   failure (Postgres unreachable → 503 with `Retry-After`).
 * Call before `app.init()`, on an adapter built with httpServerOptions.
 */
export function configureHttp(app: NestFastifyApplication, translateError?: (error: unknown) => HeraldError | null): void {
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  const routes: KnownRoute[] = [];
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method, pattern: routePattern(route.url) });
  });

  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  fastify.addHook('onSend', (_request, reply, payload, done) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!reply.hasHeader(name)) reply.header(name, value);
    done(null, payload);
  });

  // Nest answers unknown routes itself (a NotFoundException); the filter tells a wrong verb on
  // a known path (405) from an unknown path (404) with the routes seen here.
  const allowedMethods = (url: string) => {
    const path = url.split('?')[0].replace(/\/{2,}/g, '/');
    return [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))].sort();
  };
  app.useGlobalFilters(new HeraldExceptionFilter(allowedMethods, translateError));
}
