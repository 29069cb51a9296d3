import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { ensureDashboardBuilt, launchBrowser, newContext } from '../support/browser';
import { DashboardWorld, linkIn } from '../support/dashboard-world';

const JANE = { name: 'Jane', email: 'jane@people.test', password: 'correct horse battery', team: 'Acme', region: 'eu-west-1' };

/**
 * Issue 13's sign-up story in a real Chromium: the form, the verification email delivered by
 * Herald (api → worker → the local MX of people.test), the link opened from the delivered
 * message, sign-in, TOTP enrolment with codes computed by otplib from the URI the page shows,
 * sign-out, the second factor asked at the next sign-in, and a backup code that works once only;
 * then a forgotten password reset from the link of another delivered email.
 */
describe('dashboard sign-up to two-factor sign-in (browser)', () => {
  let world: DashboardWorld;
  let browser: Browser;
  let page: Page;
  /** Jane's TOTP secret, from the enrolment of the first test. */
  let secret = '';

  beforeAll(async () => {
    ensureDashboardBuilt();
    world = await DashboardWorld.start();
    browser = await launchBrowser();
    page = await (await newContext(browser, 'desktop', world.url)).newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  async function signIn(): Promise<void> {
    await page.goto('/dashboard/sign-in');
    await page.getByLabel('Email').fill(JANE.email);
    await page.getByLabel(/^Password/).fill(JANE.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  }

  /** The second step of a sign-in: the page asks for a code; `code` is typed (after switching to backup codes if asked). */
  async function secondFactor(code: string, backup = false): Promise<void> {
    await page.waitForURL(/\/dashboard\/two-factor/);
    await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    if (backup) await page.getByRole('button', { name: 'Use a backup code instead' }).click();
    await page.getByLabel(backup ? /^Backup code/ : /^Authentication code/).fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
  }

  /** Waits for the signed-in Domains page; on a timeout, says where the page is and what it shows. */
  async function signedInAt(): Promise<void> {
    try {
      await page.waitForURL(/\/dashboard\/t\/[0-9a-f-]{36}\/domains/, { timeout: 15_000 });
    } catch (error) {
      const alerts = await page.getByRole('alert').allTextContents();
      throw new Error(`not signed in: at ${page.url()}, alerts: ${alerts.join(' | ') || 'none'}`, { cause: error });
    }
  }

  it('signs up, verifies from the delivered email, enrols TOTP, and a backup code works once and not twice', async () => {
    await page.goto('/dashboard/sign-up');
    await page.getByLabel(/^Your name/).fill(JANE.name);
    await page.getByLabel(/^Email/).fill(JANE.email);
    await page.getByLabel(/^Password/).fill(JANE.password);
    await page.getByLabel(/^Team name/).fill(JANE.team);
    await page.getByRole('combobox', { name: 'Region' }).click();
    await page.getByRole('option', { name: JANE.region }).click();
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    await page.getByText(JANE.email).waitFor();

    // Before the address is verified, signing in sends the person back to the notice.
    await signIn();
    await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();

    const mail = await world.mailTo(JANE.email, /Confirm your email/);
    const link = linkIn(mail.text);
    expect(link.startsWith(`${world.url}/dashboard/api/auth/verify-email?token=`)).toBe(true);
    await page.goto(link);
    await page.waitForURL(/\/dashboard\/sign-in\?verified=1/);
    await page.getByRole('status').filter({ hasText: 'Your email address is verified.' }).waitFor();

    // Signing in moves the page on without loading the dashboard again (better-auth's client
    // used to follow its callbackURL with a full navigation beside the SPA's own).
    const documents: string[] = [];
    const onRequest = (request: { isNavigationRequest(): boolean; url(): string }) => {
      if (request.isNavigationRequest()) documents.push(request.url());
    };
    page.on('request', onRequest);
    await page.getByLabel('Email').fill(JANE.email);
    await page.getByLabel(/^Password/).fill(JANE.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signedInAt();
    await page.locator('[data-team-switcher]').waitFor();
    await page.waitForTimeout(1_000);
    page.off('request', onRequest);
    expect(documents).toEqual([]);
    // The team made at sign-up, with the name and region of the form.
    await page.locator('[data-team-switcher]').waitFor();
    expect(await page.locator('[data-team-switcher]').innerText()).toMatch(new RegExp(`^Team:\\s*${JANE.team}\\s+${JANE.region} · owner`));

    // Enrol TOTP on the Account page: the otpauth URI shown under the QR code gives the secret.
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel(/^Your password/).fill(JANE.password);
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    await page.getByRole('img', { name: 'QR code of the authenticator secret' }).waitFor();
    const uri = (await page.getByText(/^otpauth:\/\/totp\//).textContent())!;
    secret = new URL(uri).searchParams.get('secret')!;
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    await page.getByLabel(/^Code from the app/).fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByRole('alert').filter({ hasText: 'Save your backup codes' }).locator('code');
    await codes.first().waitFor();
    const backupCodes = (await codes.allTextContents()).map((c) => c.trim());
    expect(backupCodes.length).toBeGreaterThanOrEqual(5);
    await page.getByText('enabled', { exact: true }).waitFor();

    // Signed out, the password alone is not enough: the code is asked for.
    await signOut();
    await signIn();
    await secondFactor(await generate({ secret }));
    await signedInAt();

    // A backup code works once...
    await signOut();
    await signIn();
    await secondFactor(backupCodes[0]!, true);
    await signedInAt();

    // ...and not twice: the refusal is shown in words and the person stays signed out.
    await signOut();
    await signIn();
    await secondFactor(backupCodes[0]!, true);
    await page
      .getByRole('alert')
      .filter({ hasText: /\w+ \w+/ })
      .waitFor();
    expect(page.url()).toMatch(/\/dashboard\/two-factor/);
    expect((await page.request.get('/dashboard/api/me')).status()).toBe(401);
  }, 120_000);

  it('resets a forgotten password from the delivered email: the new password signs in, the old one no longer, nor the link twice', async () => {
    const newPassword = 'a brand new battery staple';
    // A session elsewhere (an API client through the same two steps) ends with the reset.
    const elsewhere = await world.client();
    expect((await elsewhere.auth('/sign-in/email', { email: JANE.email, password: JANE.password })).body.twoFactorRedirect).toBe(true);
    expect((await elsewhere.auth('/two-factor/verify-totp', { code: await generate({ secret }) })).status).toBe(200);
    expect((await elsewhere.get('/dashboard/api/me')).status).toBe(200);

    await page.goto('/dashboard/sign-in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel('Email').fill(JANE.email);
    await page.getByRole('button', { name: 'Send the reset link' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `If an account uses ${JANE.email}, a reset link is on its way` })
      .waitFor();

    const mail = await world.mailTo(JANE.email, /Reset your Herald password/);
    const link = linkIn(mail.text);
    expect(link.startsWith(`${world.url}/dashboard/api/auth/reset-password/`)).toBe(true);
    await page.goto(link);
    await page.waitForURL(/\/dashboard\/reset-password\?token=/);
    await page.getByLabel(/^New password/).fill(newPassword);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed.' }).waitFor();
    expect((await elsewhere.get('/dashboard/api/me')).status).toBe(401);

    // The old password is refused in words; the new one signs in (with the second factor, still on).
    await signIn();
    await page
      .getByRole('alert')
      .filter({ hasText: /password/i })
      .waitFor();
    expect(page.url()).toMatch(/\/dashboard\/sign-in/);
    expect((await page.request.get('/dashboard/api/me')).status()).toBe(401);
    await page.getByLabel(/^Password/).fill(newPassword);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await secondFactor(await generate({ secret }));
    await signedInAt();
    expect((await page.request.get('/dashboard/api/me')).status()).toBe(200);

    // The link was for one reset.
    await signOut();
    await page.goto(link);
    await page.getByRole('alert').filter({ hasText: 'This reset link is not valid or has expired' }).waitFor();
  }, 90_000);
});
