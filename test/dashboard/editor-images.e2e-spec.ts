import { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld } from '../support/dashboard-world';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** The broadcast editor's images: uploaded through a session, then served to anyone (a mail client) at a public URL. */
describe('broadcast editor images', () => {
  let world: DashboardWorld;
  let alice: DashboardClient;
  let bob: DashboardClient;
  let teamA: string;

  beforeAll(async () => {
    // The test's requests come from loopback, standing in for the proxy whose X-Forwarded-* the api believes.
    world = await DashboardWorld.start({ API_TRUSTED_PROXIES: '127.0.0.0/8' });
    alice = await world.signedIn('alice@people.test', 'alice password 1', { team_name: 'Team A' });
    bob = await world.signedIn('bob@people.test', 'bob password 12', { team_name: 'Team B' });
    teamA = (await alice.get('/dashboard/api/me')).body.teams[0].id;
  }, 90_000);

  afterAll(async () => {
    await world?.close();
  });

  const upload = (client: DashboardClient, body: unknown, headers?: Record<string, string>) =>
    client.post(`/dashboard/api/teams/${teamA}/images`, body, headers);

  it('stores an upload and serves it publicly, cached, at the URL it answers', async () => {
    const created = await upload(alice, { filename: 'dot.png', content_type: 'image/png', content: PNG.toString('base64') });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'image', id: expect.any(String), content_type: 'image/png', size: PNG.length });
    expect(created.body.url).toBe(`${world.url}/images/${created.body.id}`);

    const fetched = await fetch(created.body.url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(fetched.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(fetched.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await fetched.arrayBuffer()).equals(PNG)).toBe(true);
    const etag = fetched.headers.get('etag')!;
    expect((await fetch(created.body.url, { headers: { 'if-none-match': etag } })).status).toBe(304);

    // Behind a proxy the URL names the public host the dashboard was reached at.
    const proxied = await upload(
      alice,
      { content_type: 'image/png', content: PNG.toString('base64') },
      { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.herald.example' },
    );
    expect(proxied.body.url).toBe(`https://app.herald.example/images/${proxied.body.id}`);
  });

  it('answers 404 for an image that does not exist', async () => {
    expect((await fetch(`${world.url}/images/0190c2a4-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await fetch(`${world.url}/images/not-an-id`)).status).toBe(404);
  });

  it('refuses what is not an image, another team, and a request without the CSRF token', async () => {
    const svg = await upload(alice, { content_type: 'image/svg+xml', content: Buffer.from('<svg/>').toString('base64') });
    expect(svg.status).toBe(422);
    expect(svg.body).toMatchObject({ name: 'validation_error', message: expect.stringContaining('`content_type`') });
    const lying = await upload(alice, { content_type: 'image/png', content: Buffer.from('<html>').toString('base64') });
    expect(lying.status).toBe(422);
    expect(lying.body.message).toContain('not a PNG, JPEG, GIF or WebP image');

    expect((await upload(bob, { content_type: 'image/png', content: PNG.toString('base64') })).status).toBe(404);
    expect((await upload(alice, { content_type: 'image/png', content: PNG.toString('base64') }, { 'x-csrf-token': 'wrong' })).status).toBe(403);
    const anonymous = await fetch(`${world.url}/dashboard/api/teams/${teamA}/images`, { method: 'POST' });
    expect(anonymous.status).toBe(403);
  });
});
