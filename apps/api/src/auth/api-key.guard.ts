import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { HeraldError } from '@herald/core';
import { SENDING_ENDPOINT } from './principal';

/**
 * The key's permission for this route. Authentication and the rate limit have already run in
 * the `onRequest` hook (installApiKeyHook); a route without a principal is a wiring mistake.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const principal = context.switchToHttp().getRequest<FastifyRequest>().principal;
    if (!principal) throw new Error('ApiKeyGuard on a route that installApiKeyHook does not cover');
    const sending = this.reflector.getAllAndOverride<boolean>(SENDING_ENDPOINT, [context.getHandler(), context.getClass()]);
    if (principal.permission === 'sending_access' && !sending) {
      throw new HeraldError('restricted_api_key', 'This API key is restricted to only send emails.');
    }
    return true;
  }
}
