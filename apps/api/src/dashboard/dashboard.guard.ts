import { applyDecorators, CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { HeraldError } from '@herald/core';
import { type Actor, DashboardAuth, PeopleService, type Role, type SessionUser, type TeamAction } from '@herald/people';

interface DashboardCaller {
  user: SessionUser;
  teamId?: string;
  role?: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard?: DashboardCaller;
  }
}

const TEAM_ACTION = 'herald:dashboard-team-action';

/** What a route under /teams/:teamId needs of the caller's role; GETs default to `read`, the rest to `write`. */
export const Needs = (action: TeamAction) => SetMetadata(TEAM_ACTION, action);

/** The request's headers as web Headers, for better-auth's session lookup. */
export function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/**
 * The dashboard API's authorization: a better-auth session cookie, never an API key (a request
 * with `Authorization: Bearer` is refused with 401 whatever else it carries), then, for a route
 * under /teams/:teamId, membership of that team (404 `not_found` otherwise, as for a team that
 * does not exist) and a role that allows the route (403 `insufficient_role`).
 */
@Injectable()
export class DashboardGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: DashboardAuth,
    private readonly people: PeopleService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (/^bearer\s/i.test(request.headers.authorization ?? '')) {
      throw new HeraldError('session_required', 'API keys do not authenticate the dashboard API; sign in to the dashboard instead.');
    }
    const session = await this.auth.session(webHeaders(request));
    if (!session) throw new HeraldError('session_required', 'Sign in to use the dashboard.');
    const caller: DashboardCaller = { user: session.user };
    const teamId = (request.params as Record<string, string | undefined>)['teamId'];
    if (teamId !== undefined) {
      const declared = this.reflector.getAllAndOverride<TeamAction | undefined>(TEAM_ACTION, [context.getHandler(), context.getClass()]);
      caller.role = await this.people.access(teamId, session.user.id, declared ?? (request.method === 'GET' ? 'read' : 'write'));
      caller.teamId = teamId;
    }
    request.dashboard = caller;
    return true;
  }
}

/** A dashboard controller: session-authorized, left out of the REST API's OpenAPI document. */
export const DashboardController = () => applyDecorators(ApiExcludeController(), UseGuards(DashboardGuard));

const callerOf = (ctx: ExecutionContext): { request: FastifyRequest; caller: DashboardCaller } => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest>();
  if (!request.dashboard) throw new Error('dashboard parameter on a route without DashboardGuard');
  return { request, caller: request.dashboard };
};

/** The signed-in person, with where the request came from (for the audit log). */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const { request, caller } = callerOf(ctx);
  return { userId: caller.user.id, email: caller.user.email, ip: request.ip, userAgent: request.headers['user-agent'] ?? null };
});

export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): SessionUser => callerOf(ctx).caller.user);

/** The caller's role in the route's team (set by DashboardGuard). */
export const TeamRole = createParamDecorator((_: unknown, ctx: ExecutionContext): Role => {
  const role = callerOf(ctx).caller.role;
  if (!role) throw new Error('TeamRole on a route without :teamId');
  return role;
});
