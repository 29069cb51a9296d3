import { generate } from 'otplib';
import { DashboardWorld, linkIn } from '../support/dashboard-world';

/**
 * Sign-up to sign-in with a second factor, as issue 13 lists it: the verification email goes
 * through Herald (api → JetStream → worker → the local MX of people.test), the link in the
 * delivered message verifies the address, TOTP codes come from otplib, a backup code works once.
 */
describe('dashboard sign-up, verification, sign-in and TOTP', () => {
  let world: DashboardWorld;

  beforeAll(async () => {
    world = await DashboardWorld.start();
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it('signs up, verifies through a delivered email, enrols TOTP, and a backup code works once', async () => {
    const email = 'jane@people.test';
    const password = 'correct horse battery';
    const client = await world.client();

    const regions = await client.get('/dashboard/api/regions');
    expect(regions.body).toEqual({ data: ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'], default: 'us-east-1' });

    const signUp = await client.auth('/sign-up/email', { email, password, name: 'Jane', team_name: 'Acme', region: 'eu-west-1' });
    expect(signUp.status).toBe(200);
    expect(signUp.body.user.email).toBe(email);

    // Not verified yet: refused (and the link is mailed again).
    const early = await client.auth('/sign-in/email', { email, password });
    expect(early.status).toBe(403);
    expect(early.body).toMatchObject({ statusCode: 403, name: 'email_not_verified' });

    const mail = await world.mailTo(email, /Confirm your email/);
    const link = linkIn(mail.text);
    expect(link.startsWith(`${world.url}/dashboard/api/auth/verify-email?token=`)).toBe(true);
    const opened = await client.get(link.slice(world.url.length));
    expect([200, 302]).toContain(opened.status);

    const signIn = await client.auth('/sign-in/email', { email, password });
    expect(signIn.status).toBe(200);
    const sessionCookie = signIn.setCookies.find((c) => /session_token=/.test(c))!;
    expect(sessionCookie).toMatch(/HttpOnly/i);
    expect(sessionCookie).toMatch(/Secure/i);
    expect(sessionCookie).toMatch(/SameSite=Lax/i);

    const me = await client.get('/dashboard/api/me');
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email, name: 'Jane', email_verified: true, two_factor_enabled: false });
    expect(me.body.teams).toEqual([{ id: expect.any(String), name: 'Acme', role: 'owner', region: 'eu-west-1', plan: 'free' }]);

    // TOTP: enable with the password, confirm with a code computed from the secret.
    const enable = await client.auth('/two-factor/enable', { password });
    expect(enable.status).toBe(200);
    const secret = new URL(enable.body.totpURI).searchParams.get('secret')!;
    const backupCodes: string[] = enable.body.backupCodes;
    expect(backupCodes.length).toBeGreaterThanOrEqual(5);
    const confirm = await client.auth('/two-factor/verify-totp', { code: await generate({ secret }) });
    expect(confirm.status).toBe(200);
    expect((await client.get('/dashboard/api/me')).body.user.two_factor_enabled).toBe(true);

    expect((await client.auth('/sign-out')).status).toBe(200);
    expect((await client.get('/dashboard/api/me')).status).toBe(401);

    // The password alone no longer signs in: the second factor is asked for.
    const again = await client.auth('/sign-in/email', { email, password });
    expect(again.status).toBe(200);
    expect(again.body.twoFactorRedirect).toBe(true);
    expect((await client.get('/dashboard/api/me')).status).toBe(401);
    const byCode = await client.auth('/two-factor/verify-totp', { code: await generate({ secret }) });
    expect(byCode.status).toBe(200);
    expect((await client.get('/dashboard/api/me')).status).toBe(200);
    await client.auth('/sign-out');

    // A backup code works once...
    await client.auth('/sign-in/email', { email, password });
    const backup = await client.auth('/two-factor/verify-backup-code', { code: backupCodes[0] });
    expect(backup.status).toBe(200);
    expect((await client.get('/dashboard/api/me')).status).toBe(200);
    await client.auth('/sign-out');

    // ...and not twice.
    await client.auth('/sign-in/email', { email, password });
    const reused = await client.auth('/two-factor/verify-backup-code', { code: backupCodes[0] });
    expect(reused.status).toBeGreaterThanOrEqual(400);
    expect(reused.body).toMatchObject({ statusCode: reused.status, message: expect.any(String) });
    expect((await client.get('/dashboard/api/me')).status).toBe(401);

    // The audit log tells the story: sign-ins (by password, with a second factor) and the MFA changes.
    await client.auth('/sign-in/email', { email, password });
    await client.auth('/two-factor/verify-totp', { code: await generate({ secret }) });
    const log = await client.get(`/dashboard/api/teams/${me.body.teams[0].id}/audit-log`);
    const actions = log.body.data.map(
      (e: { action: string; detail: { method?: string } }) => `${e.action}${e.detail.method ? `:${e.detail.method}` : ''}`,
    );
    expect(actions).toEqual(
      expect.arrayContaining(['user.signed_in:password', 'mfa.totp_enabling', 'mfa.totp_verified', 'user.signed_in:password+2fa']),
    );
    expect(log.body.data[0]).toMatchObject({ actor_email: email, ip: expect.any(String) });

    // Passkeys are offered to the signed-in user for this origin (the WebAuthn ceremony itself needs a browser's authenticator).
    const options = await client.get('/dashboard/api/auth/passkey/generate-register-options');
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({ rp: { id: '127.0.0.1', name: 'Herald' }, user: { name: email }, challenge: expect.any(String) });
    expect((await client.get('/dashboard/api/auth/passkey/list-user-passkeys')).body).toEqual([]);
  }, 90_000);
});
