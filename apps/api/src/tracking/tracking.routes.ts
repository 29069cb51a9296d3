import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TrackingKind, TrackingService } from '@herald/tracking';

/** A transparent 1×1 GIF (43 bytes). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Every answer: never cached (each open must reach us), never sniffed, no referrer of the tracking URL passed on. */
export const NO_CACHE = {
  'cache-control': 'no-store, no-cache, must-revalidate, max-age=0',
  pragma: 'no-cache',
  expires: '0',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The tracking host's two routes, served by the api role on whatever host name the request
 * names (each domain's tracking CNAME points at the api's ingress; the token alone says which
 * email and recipient a hit is about, so an old tracking subdomain keeps working). Plain Fastify
 * routes rather than Nest controllers: they are the busiest GETs Herald serves, and they are not
 * part of the REST API (no API key, no JSON, not in the OpenAPI document, which lists Nest's
 * controllers only). A token that does not verify is a 404, recording nothing. Fastify answers HEAD
 * for these GETs too: the same answer, recording nothing (link scanners probe with HEAD).
 */
export function installTrackingRoutes(fastify: Pick<FastifyInstance, 'get'>, tracking: TrackingService): void {
  const answer = (kind: TrackingKind) => async (request: FastifyRequest<{ Params: { '*': string } }>, reply: FastifyReply) => {
    const hit = await tracking.hit(kind, request.params['*'], {
      ipAddress: request.ip,
      userAgent: request.headers['user-agent'] ?? '',
      record: request.method !== 'HEAD',
    });
    reply.headers(NO_CACHE);
    if (!hit) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    if (hit.location === null) return reply.type('image/gif').send(PIXEL);
    return reply.redirect(hit.location, 302);
  };
  fastify.get('/t/o/*', answer('open'));
  fastify.get('/t/c/*', answer('click'));
}
