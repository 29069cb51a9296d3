import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ImagesService } from '@herald/images';

/**
 * The absolute URL of an uploaded image, on the host the dashboard was reached at (behind a proxy,
 * its X-Forwarded-Proto and -Host, as the api trusts them): the public name recipients can fetch.
 */
export function imageUrl(request: FastifyRequest, id: string): string {
  return `${request.protocol}://${request.host}/images/${id}`;
}

/**
 * `GET /images/:id`: the broadcast editor's images for the recipients' mail clients. Public (no key,
 * no session: the random id is the capability) and immutable, so cached for a year. A plain Fastify
 * route, like the tracking pixel: not part of the REST API or its OpenAPI document.
 */
export function installImageRoutes(fastify: FastifyInstance, images: ImagesService): void {
  fastify.get('/images/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const image = await images.file(request.params.id);
    reply.header('x-content-type-options', 'nosniff');
    if (!image) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    const etag = `"${image.sha256}"`;
    reply.headers({ 'cache-control': 'public, max-age=31536000, immutable', etag, 'content-security-policy': "default-src 'none'" });
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type(image.contentType).send(image.content);
  });
}
