import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeysService } from '@herald/accounts';
import { CONFIG, HeraldConfig } from '@herald/config';
import { HeraldError } from '@herald/core';
import { RateLimiter, rateLimitError, rateLimitFor } from '@herald/limits';
import { SENDING_ENDPOINT } from './principal';

/**
 * Authenticates the API key, enforces its permission and the team's rate limit, and puts the
 * `ratelimit-*` headers on the response (they stay on error responses too).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly rateLimiter: RateLimiter,
    private readonly reflector: Reflector,
    @Inject(CONFIG) private readonly config: HeraldConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const principal = await this.apiKeys.authenticate(request.headers.authorization);

    const sending = this.reflector.getAllAndOverride<boolean>(SENDING_ENDPOINT, [context.getHandler(), context.getClass()]);
    if (principal.permission === 'sending_access' && !sending) {
      throw new HeraldError('restricted_api_key', 'This API key is restricted to only send emails.');
    }

    const limit = rateLimitFor(principal.team.plan, this.config, principal.team.rateLimit);
    const state = await this.rateLimiter.consume(principal.teamId, limit);
    reply.header('ratelimit-limit', String(state.limit));
    reply.header('ratelimit-remaining', String(state.remaining));
    reply.header('ratelimit-reset', String(state.resetSeconds));
    if (!state.allowed) throw rateLimitError(state);
    request.principal = principal;
    return true;
  }
}
