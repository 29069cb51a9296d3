import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidLinkPage, testLinkPage, type UnsubscribeAnswer, type UnsubscribeService } from '@herald/broadcasts';

/** Never cached, never framed, no referrer of the link passed on: the token is a credential. */
const HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
};
const MAX_FORM_BYTES = 64 * 1024;

type Request = FastifyRequest<{ Params: { token: string }; Body: string | undefined }>;

/**
 * The hosted unsubscribe link of broadcast emails, on the api role, with no sign-in (the token
 * is the credential): `GET /unsubscribe/:token` opens the preference page; `POST` with
 * `List-Unsubscribe=One-Click` (RFC 8058, what mail clients send), or with an empty body,
 * unsubscribes at once and answers 200, no redirect; `POST` from the page's own form
 * (`action=save|all`) saves the choices. A token that does not verify changes nothing: 404.
 * Plain Fastify routes, as the tracking routes are: not the REST API (no key, no JSON).
 */
export function installUnsubscribeRoutes(fastify: FastifyInstance, unsubscribe: UnsubscribeService): void {
  const answer = (reply: FastifyReply, result: UnsubscribeAnswer) => {
    reply.headers(HEADERS).type('text/html; charset=utf-8');
    return result.status === 200 ? reply.code(200).send(result.html) : reply.code(404).send(invalidLinkPage());
  };
  const isTest = (request: Request, reply: FastifyReply) => {
    if (request.params.token !== 'test') return false;
    void reply.headers(HEADERS).type('text/html; charset=utf-8').code(200).send(testLinkPage());
    return true;
  };

  void fastify.register(async (scope) => {
    // Forms and RFC 8058 posts: urlencoded or multipart, read as text here, in this scope only (text/plain is Fastify's own).
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data']) {
      // The app may parse multipart itself (the contacts import): this scope reads it as text instead.
      if (scope.hasContentTypeParser(type)) scope.removeContentTypeParser(type);
      scope.addContentTypeParser(type, { parseAs: 'string', bodyLimit: MAX_FORM_BYTES }, (_request, body, done) => done(null, body));
    }

    scope.get('/unsubscribe/:token', async (request: Request, reply) => {
      if (isTest(request, reply)) return reply;
      return answer(reply, await unsubscribe.preferences(request.params.token, pathOf(request)));
    });

    scope.post('/unsubscribe/:token', async (request: Request, reply) => {
      if (isTest(request, reply)) return reply;
      const form = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
      const action = form.get('action');
      const token = request.params.token;
      if (action === 'all') return answer(reply, await unsubscribe.savePreferences(token, { action: 'all' }, pathOf(request)));
      if (action === 'save')
        return answer(reply, await unsubscribe.savePreferences(token, { action: 'save', topics: form.getAll('topic') }, pathOf(request)));
      return answer(reply, await unsubscribe.oneClick(token));
    });
  });
}

/** The page's own path, which its forms post back to (relative: whatever host served it). */
function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0]!;
}
