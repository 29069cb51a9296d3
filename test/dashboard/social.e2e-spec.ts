import type { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld } from '../support/dashboard-world';
import { GithubStandIn } from '../support/github-stand-in';
import { OidcProvider } from '../support/oidc-provider';

/**
 * Google sign-in against oauth2-mock-server as an OpenID Connect provider (discovery, signed ID
 * tokens, PKCE), GitHub sign-in against a local stand-in for github.com and api.github.com:
 * new users, a denied consent, a GitHub account without a verified address, linking to an
 * existing user by verified address, and unlinking.
 */
describe('dashboard sign-in with Google and GitHub', () => {
  let world: DashboardWorld;
  let google: OidcProvider;
  let github: GithubStandIn;

  beforeAll(async () => {
    google = await OidcProvider.start();
    github = await GithubStandIn.start();
    world = await DashboardWorld.start({
      GOOGLE_CLIENT_ID: 'herald-google-client',
      GOOGLE_CLIENT_SECRET: 'herald-google-secret',
      GOOGLE_DISCOVERY_URL: google.discoveryUrl,
      ...github.config(),
    });
  }, 60_000);

  afterAll(async () => {
    await world?.close();
    await google?.stop();
    await github?.close();
  });

  /** Starts a social sign-in, lets the provider answer, and follows the redirect back: where the browser lands. */
  async function socialSignIn(client: DashboardClient, provider: string, path = '/sign-in/social'): Promise<URL> {
    const start = await client.auth(path, { provider, callbackURL: '/dashboard/', errorCallbackURL: '/dashboard/sign-in' });
    expect(start.status).toBe(200);
    const atProvider = await fetch(start.body.url, { redirect: 'manual' });
    expect(atProvider.status).toBe(302);
    const callback = new URL(atProvider.headers.get('location')!);
    expect(callback.pathname).toBe(`/dashboard/api/auth/callback/${provider}`);
    const back = await client.get(callback.pathname + callback.search);
    expect(back.status).toBe(302);
    return new URL(back.headers.get('location')!, world.url);
  }

  it('lists the configured providers for the sign-in page, to anyone', async () => {
    const response = await fetch(`${world.url}/dashboard/api/sign-in-providers`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: ['google', 'github'] });
  });

  it('signs a new user in with Google (OpenID Connect) and gives them a team', async () => {
    await google.signInAs({ sub: 'google-1', email: 'gina@people.test', email_verified: true, name: 'Gina' });
    const client = await world.client();
    const landed = await socialSignIn(client, 'google');
    expect(landed.pathname).toBe('/dashboard/');
    const me = await client.get('/dashboard/api/me');
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email: 'gina@people.test', name: 'Gina', email_verified: true });
    expect(me.body.teams).toEqual([expect.objectContaining({ name: "Gina's team", role: 'owner', region: 'us-east-1' })]);
  });

  it('comes back signed out when Google consent is denied', async () => {
    await google.denyConsent(true);
    try {
      const client = await world.client();
      const landed = await socialSignIn(client, 'google');
      expect(landed.pathname).toBe('/dashboard/sign-in');
      expect(landed.searchParams.get('error')).toBe('access_denied');
      expect((await client.get('/dashboard/api/me')).status).toBe(401);
    } finally {
      await google.denyConsent(false);
    }
  });

  it('signs a new user in with GitHub, and refuses a denied consent', async () => {
    github.next = { id: 101, login: 'octo', name: 'Octo Cat', emails: [{ email: 'octo@people.test', primary: true, verified: true }] };
    const client = await world.client();
    expect((await socialSignIn(client, 'github')).pathname).toBe('/dashboard/');
    expect((await client.get('/dashboard/api/me')).body.user).toMatchObject({ email: 'octo@people.test', name: 'Octo Cat', email_verified: true });

    github.deny = true;
    const denied = await world.client();
    const landed = await socialSignIn(denied, 'github');
    expect(landed.pathname).toBe('/dashboard/sign-in');
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect((await denied.get('/dashboard/api/me')).status).toBe(401);
  });

  it('refuses a GitHub account without a verified address, saying so', async () => {
    github.next = { id: 102, login: 'ghost', name: 'Ghost', emails: [{ email: 'ghost@people.test', primary: true, verified: false }] };
    const client = await world.client();
    const landed = await socialSignIn(client, 'github');
    expect(landed.pathname).toBe('/dashboard/sign-in');
    expect(landed.searchParams.get('error')).toBe('email_not_found');
    expect((await client.get('/dashboard/api/me')).status).toBe(401);
  });

  it('links GitHub and Google to an existing user by verified address, and unlinks', async () => {
    const password = 'linking password';
    const existing = await world.signedIn('lin@people.test', password);
    const userId = (await existing.get('/dashboard/api/me')).body.user.id;

    github.next = { id: 103, login: 'lin', name: 'Lin', emails: [{ email: 'lin@people.test', primary: true, verified: true }] };
    const viaGithub = await world.client();
    expect((await socialSignIn(viaGithub, 'github')).pathname).toBe('/dashboard/');
    expect((await viaGithub.get('/dashboard/api/me')).body.user.id).toBe(userId);

    await google.signInAs({ sub: 'google-lin', email: 'lin@people.test', email_verified: true, name: 'Lin' });
    const viaGoogle = await world.client();
    expect((await socialSignIn(viaGoogle, 'google')).pathname).toBe('/dashboard/');
    expect((await viaGoogle.get('/dashboard/api/me')).body.user.id).toBe(userId);
    // One user, one team: linking made no second account.
    expect((await viaGoogle.get('/dashboard/api/me')).body.teams).toHaveLength(1);

    const accounts = await existing.get('/dashboard/api/auth/list-accounts');
    expect(accounts.body.map((a: any) => a.providerId).sort()).toEqual(['credential', 'github', 'google']);
    const linked = accounts.body.find((a: any) => a.providerId === 'github');
    const unlinked = await existing.auth('/unlink-account', { accountId: linked.id });
    expect(unlinked.status).toBe(200);
    expect((await existing.get('/dashboard/api/auth/list-accounts')).body.map((a: any) => a.providerId).sort()).toEqual(['credential', 'google']);
    // Signing in with it again links it again: its verified address is Lin's.
    const again = await world.client();
    github.next = { id: 103, login: 'lin', name: 'Lin', emails: [{ email: 'lin@people.test', primary: true, verified: true }] };
    await socialSignIn(again, 'github');
    expect((await again.get('/dashboard/api/me')).body.user.id).toBe(userId);
  });
});
