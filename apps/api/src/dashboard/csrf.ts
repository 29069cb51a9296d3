import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError } from '@herald/core';
import { sendError } from '@herald/http';
import { parseCookies } from './cookies';

export const CSRF_COOKIE = 'herald_csrf';
export const CSRF_HEADER = 'x-csrf-token';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const DASHBOARD_API = /^\/dashboard\/api\//;

/** Whether a request must carry the double-submit token: a state change under /dashboard/api/. */
export const needsCsrfToken = (method: string, path: string): boolean => STATE_CHANGING.has(method) && DASHBOARD_API.test(path);

/** The header equals the cookie, both present (compared in constant time). */
export function csrfTokenMatches(cookieHeader: string | undefined, header: string | string[] | undefined): boolean {
  const cookie = parseCookies(cookieHeader).get(CSRF_COOKIE);
  const sent = Array.isArray(header) ? header[0] : header;
  if (!cookie || !sent || cookie.length < 16) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Double-submit CSRF protection for the dashboard (contract "CSRF"): `GET /dashboard/api/csrf`
 * sets the `herald_csrf` cookie (readable by the page, SameSite=Lax) and answers the same token;
 * every POST, PUT, PATCH and DELETE under /dashboard/api/, better-auth's included, must send it
 * back in `X-CSRF-Token`. A page of another site can make the browser send the cookie but cannot
 * read it, so it cannot send the header. Runs in `onRequest`, before any body is read.
 */
export function installCsrf(fastify: FastifyInstance, secure: boolean): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!needsCsrfToken(request.method, request.url.split('?')[0]!)) return;
    if (csrfTokenMatches(request.headers.cookie, request.headers[CSRF_HEADER])) return;
    return sendError(
      reply,
      new HeraldError(
        'csrf_token_invalid',
        'The X-CSRF-Token header is missing or does not match the herald_csrf cookie; get one from GET /dashboard/api/csrf.',
      ),
    );
  });

  fastify.get('/dashboard/api/csrf', (request, reply) => {
    const existing = parseCookies(request.headers.cookie).get(CSRF_COOKIE);
    const token = existing && /^[A-Za-z0-9_-]{32,}$/.test(existing) ? existing : randomBytes(32).toString('base64url');
    const flags = ['Path=/dashboard', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
    reply.header('set-cookie', `${CSRF_COOKIE}=${token}; ${flags.join('; ')}`);
    reply.header('cache-control', 'no-store');
    return reply.type('application/json').send({ token });
  });
}
