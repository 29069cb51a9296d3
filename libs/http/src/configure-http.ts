import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { HeraldError } from '@herald/core';
import { HeraldExceptionFilter } from './herald-exception.filter';

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
 * - JSON bodies, including an empty body sent with `Content-Type: application/json` (the SDK
 *   does that for cancel/verify/delete);
 * - 404 `not_found` for an unknown path, 405 `method_not_allowed` for a known path with the
 *   wrong verb, both as Resend error bodies;
 * - every error through HeraldExceptionFilter.
 * Call before `app.init()`.
 */
export function configureHttp(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  const routes: KnownRoute[] = [];
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method, pattern: routePattern(route.url) });
  });

  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new HeraldError('validation_error', 'The request body is not valid JSON.'), undefined);
    }
  });

  // Nest answers unknown routes itself (a NotFoundException); the filter tells a wrong verb on
  // a known path (405) from an unknown path (404) with the routes seen here.
  const otherMethodMatches = (method: string, url: string) => {
    const path = url.split('?')[0].replace(/\/{2,}/g, '/');
    return routes.some((r) => r.method !== method && r.method !== 'HEAD' && r.pattern.test(path));
  };
  app.useGlobalFilters(new HeraldExceptionFilter(otherMethodMatches));
}
