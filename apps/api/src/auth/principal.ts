import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Principal } from '@herald/accounts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** Marks a handler a `sending_access` key may call (the two send endpoints). */
export const SENDING_ENDPOINT = 'herald:sending-endpoint';
export const SendingEndpoint = () => SetMetadata(SENDING_ENDPOINT, true);

/** The authenticated caller, set by ApiKeyGuard. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<{ principal?: Principal }>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without ApiKeyGuard');
  return principal;
});
