import { DashboardWorld } from '../support/dashboard-world';

/** CSRF, the two authentications kept apart, and the sign-in rate limit. */
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
