import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HeraldError } from '@herald/core';
import { heraldErrorOf, sendError } from '@herald/http';
import { AUTH_BASE_PATH, CLIENT_IP_HEADER, DashboardAuth, PeopleService, SignInLimiter, signUpExtras } from '@herald/people';

/** better-auth calls that change how someone signs in: written to the audit log when they succeed. */
const AUDITED: Record<string, string> = {
  '/two-factor/enable': 'mfa.totp_enabling',
  '/two-factor/disable': 'mfa.totp_disabled',
  '/two-factor/generate-backup-codes': 'mfa.backup_codes_generated',
  '/passkey/verify-registration': 'mfa.passkey_added',
  '/passkey/register': 'mfa.passkey_added',
  '/passkey/delete-passkey': 'mfa.passkey_deleted',
  '/change-password': 'password.changed',
  '/link-social': 'account.linking',
  '/unlink-account': 'account.unlinked',
  '/revoke-session': 'session.revoked',
  '/revoke-other-sessions': 'session.revoked_others',
};
/** The first TOTP check after `enable` is what turns two-factor on. */
const TOTP_VERIFY = '/two-factor/verify-totp';

/**
 * better-auth's handler on the api role at /dashboard/api/auth/*. Its fetch handler is used (not
 * toNodeHandler) because Herald's Fastify has already parsed the JSON body: the request is
 * rebuilt as a web Request with the parsed body, and the web Response copied back, each
 * Set-Cookie header on its own. Around it: the sign-in rate limit (SignInLimiter), the client
 * address from the socket (never from the client's headers), error bodies in Herald's shape
 * (better-auth's `code` kept for its client), and the audit of sign-in changes.
 */
export function installAuthRoute(
  fastify: FastifyInstance,
  auth: DashboardAuth,
  limiter: SignInLimiter,
  people: PeopleService,
  regions: readonly string[],
): void {
  const extras = signUpExtras(regions);
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!.slice(AUTH_BASE_PATH.length);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || name === 'content-length' || name === CLIENT_IP_HEADER) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    headers.set(CLIENT_IP_HEADER, request.ip);
    const body = request.method === 'GET' || request.method === 'HEAD' || request.body === undefined ? undefined : JSON.stringify(request.body);
    if (body !== undefined) headers.set('content-type', 'application/json');

    // Herald's fields of the sign-up body (the first team's name and region), checked before better-auth creates anyone.
    if (path === '/sign-up/email' && request.method === 'POST') {
      const checked = extras.safeParse(request.body ?? {});
      if (!checked.success) return sendError(reply, heraldErrorOf(checked.error));
    }
    const email = path === '/sign-in/email' && request.method === 'POST' ? signInEmail(request.body) : null;
    if (email !== null) {
      const verdict = await limiter.check(email, request.ip);
      if (!verdict.allowed) {
        return sendError(
          reply,
          new HeraldError('rate_limit_exceeded', 'Too many sign-in attempts. Wait a minute before trying again.', verdict.retryAfterSeconds),
        );
      }
    }
    const audited = request.method === 'POST' ? (AUDITED[path] ?? (path === TOTP_VERIFY ? 'mfa.totp_verified' : undefined)) : undefined;
    const before = audited ? await auth.session(headers) : null;

    const response = await auth.handle(new Request(new URL(request.url, auth.dashboardUrl), { method: request.method, headers, body }));

    if (email !== null && response.status === 401) await limiter.failed(email);
    if (audited && before && response.ok) {
      const actor = { userId: before.user.id, email: before.user.email, ip: request.ip, userAgent: request.headers['user-agent'] ?? null };
      await people.record(actor, null, audited, { path });
    }
    return forward(response, reply);
  };
  fastify.route({ method: ['GET', 'POST'], url: `${AUTH_BASE_PATH}/*`, handler });
}

async function forward(response: Response, reply: FastifyReply): Promise<FastifyReply> {
  reply.status(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie' && name !== 'content-length' && name !== 'content-encoding') reply.header(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) reply.header('set-cookie', cookies);
  const text = await response.text();
  if (response.status >= 400 && (response.headers.get('content-type') ?? '').includes('application/json')) {
    return reply.send(heraldShaped(response.status, text));
  }
  return reply.send(text);
}

/** better-auth's `{ code, message }` as Herald's `{ statusCode, name, message }`, its code kept for its client. */
export function heraldShaped(status: number, text: string): Record<string, unknown> {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // not JSON after all: the status alone speaks
  }
  const code = typeof parsed['code'] === 'string' ? parsed['code'] : `http_${status}`;
  const message = typeof parsed['message'] === 'string' && parsed['message'] ? parsed['message'] : 'The request could not be completed.';
  return { ...parsed, statusCode: status, name: code.toLowerCase(), message };
}

function signInEmail(body: unknown): string | null {
  const email = body && typeof body === 'object' ? (body as Record<string, unknown>)['email'] : undefined;
  return typeof email === 'string' ? email : '';
}
