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
    const text = body as string;
    // JSON.parse skips surrounding whitespace itself; trim() would copy a large body to find none.
    if (/^\s*$/.test(text)) return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new HeraldError('validation_error', 'The request body is not valid JSON.'), undefined);
    }
    // Postgres text cannot hold NUL. JSON can only carry one as the escape \u0000, so the cheap
    // text search finds every candidate; the walk tells a real NUL from an escaped backslash.
    const where = text.includes('\\u0000') ? nulPath(parsed, '') : null;
    if (where !== null) return done(new HeraldError('validation_error', `The \`${where || 'body'}\` field must not contain NUL (\\u0000) characters.`), undefined);
    done(null, parsed);
  });

  // Nest answers unknown routes itself (a NotFoundException); the filter tells a wrong verb on
  // a known path (405) from an unknown path (404) with the routes seen here.
  const otherMethodMatches = (method: string, url: string) => {
    const path = url.split('?')[0].replace(/\/{2,}/g, '/');
    return routes.some((r) => r.method !== method && r.method !== 'HEAD' && r.pattern.test(path));
  };
  app.useGlobalFilters(new HeraldExceptionFilter(otherMethodMatches));
}

/** The path of the first string (or key) holding a NUL character, or null. */
function nulPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\0') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const child = path ? `${path}.${key}` : key;
      if (key.includes('\0')) return child;
      const found = nulPath(item, child);
      if (found !== null) return found;
    }
  }
  return null;
}
