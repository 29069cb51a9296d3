import { request } from 'node:http';
import { RedisService } from '@herald/redis';
import type { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld } from '../support/dashboard-world';

/** The session cookie's value (`<token>.<signature>`, URL-encoded) and the session token in it. */
const sessionCookie = (client: DashboardClient) => [...client.cookies].find(([name]) => name.endsWith('session_token'));
const sessionToken = (client: DashboardClient) => decodeURIComponent(sessionCookie(client)?.[1] ?? '').split('.')[0];

/** CSRF, the two authentications kept apart, sessions, and the sign-in rate limits. */
describe('dashboard security', () => {
  let world: DashboardWorld;

  beforeAll(async () => {
    world = await DashboardWorld.start();
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it('refuses a state change without the CSRF token, better-auth’s and Herald’s alike', async () => {
    const client = await world.signedIn('csrf@people.test');
    const teamId = (await client.get('/dashboard/api/me')).body.teams[0].id;
    client.csrf = false;
    const expected = { statusCode: 403, name: 'csrf_token_invalid', message: expect.stringContaining('X-CSRF-Token') };
    const signOut = await client.auth('/sign-out');
    expect({ status: signOut.status, body: signOut.body }).toEqual({ status: 403, body: expected });
    const create = await client.post(`/dashboard/api/teams/${teamId}/api-keys`, { name: 'x' });
    expect({ status: create.status, body: create.body }).toEqual({ status: 403, body: expected });
    const wrong = await client.post(`/dashboard/api/teams/${teamId}/api-keys`, { name: 'x' }, { 'x-csrf-token': 'a'.repeat(43) });
    expect(wrong.status).toBe(403);
    // Reads need no token; with it, the same change goes through.
    expect((await client.get('/dashboard/api/me')).status).toBe(200);
    client.csrf = true;
    expect((await client.post(`/dashboard/api/teams/${teamId}/api-keys`, { name: 'x' })).status).toBe(201);

    const csrf = await client.get('/dashboard/api/csrf');
    const cookie = csrf.setCookies.find((c) => c.startsWith('herald_csrf='))!;
    expect(cookie).toMatch(/Path=\/dashboard/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).not.toMatch(/HttpOnly/i);
    expect(csrf.body.token).toBe(client.cookies.get('herald_csrf'));
  });

  it('never lets an API key into the dashboard API, nor a session into the REST API', async () => {
    const client = await world.signedIn('keys@people.test');
    const teamId = (await client.get('/dashboard/api/me')).body.teams[0].id;
    const { token } = (await client.post(`/dashboard/api/teams/${teamId}/api-keys`, { name: 'k' })).body;

    const withKey = await fetch(`${world.url}/dashboard/api/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(withKey.status).toBe(401);
    expect(await withKey.json()).toEqual({ statusCode: 401, name: 'session_required', message: expect.stringContaining('API keys') });
    // Even alongside a valid session cookie.
    const both = await client.get('/dashboard/api/me', { authorization: `Bearer ${token}` });
    expect(both.status).toBe(401);
    const teamRoute = await fetch(`${world.url}/dashboard/api/teams/${teamId}/domains`, { headers: { authorization: `Bearer ${token}` } });
    expect(teamRoute.status).toBe(401);

    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const rest = await fetch(`${world.url}/emails`, { headers: { cookie } });
    expect(rest.status).toBe(401);
    expect(((await rest.json()) as { name: string }).name).toBe('missing_api_key');
    expect((await fetch(`${world.url}/domains`, { headers: { cookie } })).status).toBe(401);
    // The key itself still works where it belongs.
    expect((await fetch(`${world.url}/domains`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it('answers the 11th wrong password within a minute with 429 and Retry-After', async () => {
    const email = 'guess@people.test';
    const password = 'the right password';
    await world.signedIn(email, password);
    const attacker = await world.client();
    for (let i = 1; i <= 10; i++) {
      const wrong = await attacker.auth('/sign-in/email', { email, password: `wrong password ${i}` });
      expect({ attempt: i, status: wrong.status }).toEqual({ attempt: i, status: 401 });
    }
    const eleventh = await attacker.auth('/sign-in/email', { email, password: 'wrong password 11' });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
    const retryAfter = Number(eleventh.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The right password is refused too until the minute is over: the account is what is protected.
    expect((await attacker.auth('/sign-in/email', { email, password })).status).toBe(429);
    // Another account from elsewhere is not affected.
    const other = await world.client();
    expect((await other.auth('/sign-in/email', { email: 'keys@people.test', password: 'wrong' })).status).toBe(401);
  });

  it('lists the sessions of two browsers, revokes the other one (401 there after), and gives a new session id at each sign-in', async () => {
    const email = 'sessions@people.test';
    const password = 'sessions password 1';
    const laptop = await world.signedIn(email, password);
    const first = sessionToken(laptop);
    expect(first).toMatch(/^\w{20,}$/);
    // Signed out and in again: another session id, and the old one opens nothing.
    const old = [...laptop.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    expect((await laptop.auth('/sign-out')).status).toBe(200);
    expect((await laptop.auth('/sign-in/email', { email, password })).status).toBe(200);
    expect(sessionToken(laptop)).not.toBe(first);
    expect((await fetch(`${world.url}/dashboard/api/me`, { headers: { cookie: old } })).status).toBe(401);

    // A second browser that already carries a session cookie (here the laptop's: a fixed session) gets its own at sign-in.
    const phone = await world.client();
    const [name, value] = sessionCookie(laptop)!;
    phone.cookies.set(name, value);
    expect((await phone.auth('/sign-in/email', { email, password })).status).toBe(200);
    expect(sessionToken(phone)).not.toBe(sessionToken(laptop));

    const listed = await laptop.get('/dashboard/api/auth/list-sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.map((s: { token: string }) => s.token).sort()).toEqual([sessionToken(laptop), sessionToken(phone)].sort());
    expect(listed.body[0]).toMatchObject({ ipAddress: expect.stringMatching(/127\.0\.0\.1/), expiresAt: expect.any(String) });
    const revoked = await laptop.auth('/revoke-session', { token: sessionToken(phone) });
    expect(revoked.status).toBe(200);
    expect((await phone.get('/dashboard/api/me')).status).toBe(401);
    expect((await laptop.get('/dashboard/api/me')).status).toBe(200);
    expect((await laptop.get('/dashboard/api/auth/list-sessions')).body.map((s: { token: string }) => s.token)).toEqual([sessionToken(laptop)]);
    const log = (await laptop.get('/dashboard/api/me/audit-log')).body.data.map((e: { action: string }) => e.action);
    expect(log).toContain('session.revoked');
  });

  it('answers the 31st sign-in attempt from one address within a minute with 429 whatever the accounts, counted in Redis, X-Forwarded-For or not', async () => {
    const email = 'roamer@people.test';
    const password = 'the roamer password';
    await world.signedIn(email, password);
    const csrf = await world.client();
    // The limit is on attempts, whatever they name (so the per-account limit is never what refuses)
    // and however they end: three wrong passwords of three accounts, then malformed attempts,
    // refused before any password is hashed (scrypt on a busy machine would set the pace).
    for (let i = 1; i <= 30; i++) {
      const guess = i <= 3;
      const body = guess ? { email: `nobody-${i}@people.test`, password: 'a wrong password' } : { email: `not an address ${i}`, password: 'x' };
      const attempt = await signInFrom(csrf, '127.0.0.31', body);
      expect({ attempt: i, status: attempt.status }).toEqual({ attempt: i, status: guess ? 401 : 400 });
    }
    const refused = await signInFrom(csrf, '127.0.0.31', { email, password });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    // The count is Redis's (shared by every api process), not a process's own fallback.
    const redis = world.delivery.api.app.get(RedisService);
    expect(Number(await redis.command((c) => c.get(redis.key('signin', 'address', '127.0.0.31'))))).toBe(31);
    // A forged X-Forwarded-For neither frees the address nor puts the limit on another one.
    expect((await signInFrom(csrf, '127.0.0.31', { email, password }, '198.51.100.7')).status).toBe(429);
    expect((await signInFrom(csrf, '127.0.0.32', { email, password }, '127.0.0.31')).status).toBe(200);
    expect((await signInFrom(csrf, '127.0.0.33', { email, password })).status).toBe(200);
  });

  it('refuses a sign-up whose region is not one of HERALD_REGIONS, creating nobody', async () => {
    const client = await world.client();
    const refused = await client.auth('/sign-up/email', { email: 'mars@people.test', password: 'a long password', name: 'M', region: 'mars-1' });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 422,
      body: {
        statusCode: 422,
        name: 'validation_error',
        message: 'The `region` field must be one of: us-east-1, eu-west-1, sa-east-1, ap-northeast-1.',
      },
    });
    const retried = await client.auth('/sign-up/email', { email: 'mars@people.test', password: 'a long password', name: 'M', region: 'sa-east-1' });
    expect(retried.status).toBe(200);
  });

  it('answers 401 session_required without a session', async () => {
    const anonymous = await world.client();
    const me = await anonymous.get('/dashboard/api/me');
    expect({ status: me.status, body: me.body }).toEqual({
      status: 401,
      body: { statusCode: 401, name: 'session_required', message: 'Sign in to use the dashboard.' },
    });
    expect((await anonymous.get('/dashboard/api/regions')).status).toBe(200);
  });
});

/** A sign-in sent from `address` (a loopback address of this machine: the socket's, which the limiter counts), with the CSRF pair of `csrf`. */
function signInFrom(
  csrf: DashboardClient,
  address: string,
  body: { email: string; password: string },
  forwardedFor?: string,
): Promise<{ status: number; body: any; retryAfter: string | undefined }> {
  const json = JSON.stringify(body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    origin: csrf.url,
    cookie: [...csrf.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    'x-csrf-token': csrf.cookies.get('herald_csrf')!,
    ...(forwardedFor && { 'x-forwarded-for': forwardedFor }),
  };
  return new Promise((resolve, reject) => {
    const sent = request(`${csrf.url}/dashboard/api/auth/sign-in/email`, { method: 'POST', headers, localAddress: address }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: response.statusCode!,
          body: text ? JSON.parse(text) : null,
          retryAfter: response.headers['retry-after'] as string | undefined,
        });
      });
    });
    sent.on('error', reject);
    sent.end(json);
  });
}
