import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError } from '@herald/core';
import { sendError } from '@herald/http';

export const DASHBOARD_PREFIX = '/dashboard';

/**
 * The SPA's policy: its own scripts only, no inline script, no framing. Styles allow inline
 * (Mantine sets style attributes and its CSS variables in a <style>). Images allow https: for one
 * reason: the email preview is an iframe srcdoc, which inherits this policy, and shows remote
 * images once the person presses "Load remote content" (its own <meta> policy blocks them until then).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HTML_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'cache-control': 'no-cache',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

/** dist/dashboard under the repository (or image) root: the folder above apps/ and dist/ that holds package.json. */
export function dashboardDirectory(from = __dirname): string {
  let directory = from;
  while (!existsSync(join(directory, 'package.json')) && dirname(directory) !== directory) directory = dirname(directory);
  return join(directory, 'dist', 'dashboard');
}

function isJsonApi(url: string): boolean {
  return url.startsWith(`${DASHBOARD_PREFIX}/api/`) || url === `${DASHBOARD_PREFIX}/api`;
}

/**
 * Serves the built dashboard (npm run build → dist/dashboard) at /dashboard/: hashed assets with
 * immutable caching, every other /dashboard/* path answers index.html so client routes load, and
 * an unknown /dashboard/api/* path stays a JSON 404 (the JSON API's own routes are more specific
 * than the wildcard, so they win). `/` sends browsers to the dashboard.
 */
export async function serveDashboard(app: NestFastifyApplication, root = dashboardDirectory()): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  const indexPath = join(root, 'index.html');
  await app.register(fastifyStatic as never, {
    root: join(root, 'assets'),
    prefix: `${DASHBOARD_PREFIX}/assets/`,
    index: false,
    wildcard: true,
    decorateReply: false,
    cacheControl: false,
    // @fastify/static 10 hands setHeaders the Fastify reply; the names carry a content hash, so a file never changes.
    setHeaders: (reply: FastifyReply) => reply.header('cache-control', 'public, max-age=31536000, immutable'),
  });

  const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    if (isJsonApi(path)) return sendError(reply, new HeraldError('not_found', `No dashboard API route matches ${request.method} ${path}.`));
    let html: string;
    try {
      html = await readFile(indexPath, 'utf8');
    } catch {
      return sendError(reply, new HeraldError('service_unavailable', 'The dashboard is not built: run `npm run build`, then reload.'));
    }
    return reply.headers(HTML_HEADERS).type('text/html; charset=utf-8').send(html);
  };
  // The router ignores trailing slashes (httpServerOptions), so this route is /dashboard as well.
  fastify.get(`${DASHBOARD_PREFIX}/`, sendIndex);
  fastify.get(`${DASHBOARD_PREFIX}/*`, sendIndex);
  fastify.get('/', (request, reply) => {
    if (String(request.headers.accept ?? '').includes('text/html')) return reply.redirect(`${DASHBOARD_PREFIX}/`, 302);
    return sendError(
      reply,
      new HeraldError('not_found', 'Herald serves its REST API under its resource paths (see /openapi.json) and the dashboard at /dashboard/.'),
    );
  });
}

/** True when the dashboard was built (the api role logs where to find it). */
export function dashboardBuilt(root = dashboardDirectory()): boolean {
  try {
    return readFileSync(join(root, 'index.html')).length > 0;
  } catch {
    return false;
  }
}
