import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeysService } from '@herald/accounts';
import { isHeraldError } from '@herald/core';
import { postgresUnavailable } from '@herald/database';
import { sendError } from '@herald/http';
import { RateLimitConfig, RateLimiter, rateLimitError, rateLimitFor } from '@herald/limits';

/**
 * Paths served without a key: probes, metrics, the API's own description, the dashboard (its
 * files, and its JSON API, which a session authorizes and an API key never does) with `/`, which
 * sends browsers there, the tracking host's pixel and links (`/t/o/…`, `/t/c/…`), the broadcasts'
 * unsubscribe links (`/unsubscribe/…`, whose signed token is the credential), and the broadcast
 * editor's images (`/images/…`, fetched by recipients' mail clients).
 */
const PUBLIC = /^\/+(health\/|metrics$|openapi\.json$|dashboard(\/|$)|t\/[oc]\/|unsubscribe\/|images\/|$)/;

/**
 * Authenticates the API key and applies the team's rate limit in Fastify's `onRequest` hook:
 * before the body is read or parsed, so a request without a valid key, or over its limit, costs
 * no body parsing, and the `ratelimit-*` headers are on every response (errors included).
 * Which key may call which route is the guard's job (ApiKeyGuard), once the route is known.
 */
export function installApiKeyHook(fastify: FastifyInstance, apiKeys: ApiKeysService, rateLimiter: RateLimiter, config: RateLimitConfig): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (PUBLIC.test(request.url.split('?')[0])) return;
    try {
      const principal = await apiKeys.authenticate(request.headers.authorization);
      const state = await rateLimiter.consume(principal.teamId, rateLimitFor(principal.team.plan, config, principal.team.rateLimit));
      reply.header('ratelimit-limit', String(state.limit));
      reply.header('ratelimit-remaining', String(state.remaining));
      reply.header('ratelimit-reset', String(state.resetSeconds));
      if (!state.allowed) return sendError(reply, rateLimitError(state));
      request.principal = principal;
    } catch (error) {
      // A key not in the cache is read from Postgres: unreachable, that is a 503 like the routes'.
      const answer = isHeraldError(error) ? error : postgresUnavailable(error);
      if (!answer) throw error;
      return sendError(reply, answer);
    }
  });
}
