import type { Browser, Page } from 'playwright-core';
import { startTestApi, type TestApi } from '../support/api-harness';
import {
  ensureDashboardBuilt,
  launchBrowser,
  newContext,
  screenshot,
  seriousViolations,
  type AxeViolation,
  type ViewportName,
} from '../support/browser';
import { until, verifiedUser } from '../support/dashboard-browser';
import { GithubStandIn } from '../support/github-stand-in';
import { OidcProvider } from '../support/oidc-provider';

const LIN = { email: 'lin@people.test', password: 'lin password 1' };
const SIGNED_IN = /\/dashboard\/t\/([0-9a-f-]{36})\/domains/;

/**
 * Google and GitHub sign-in in a real Chromium, by the SPA's buttons: Google is oauth2-mock-server
 * as an OpenID Connect provider (discovery, signed ID tokens, PKCE), GitHub a local stand-in for
 * github.com's OAuth endpoints and api.github.com's /user and /user/emails, both reached through
 * the provider URLs of the configuration. New users, denied consents and a GitHub account without
 * a verified address land back on sign-in with words; an existing user is linked by verified
 * address, and links and unlinks on the Account page.
 */
describe('dashboard sign-in with Google and GitHub (browser)', () => {
  let google: OidcProvider;
  let github: GithubStandIn;
  let api: TestApi;
  let browser: Browser;
  let linId: string;
  /** Dashboard API answers of 500 and up and uncaught page errors, in any page of the suite. */
  const problems: string[] = [];
  const violations: Record<string, AxeViolation[]> = {};

  beforeAll(async () => {
    ensureDashboardBuilt();
    [google, github] = await Promise.all([OidcProvider.start(), GithubStandIn.start()]);
    api = await startTestApi({
      GOOGLE_CLIENT_ID: 'herald-google-client',
      GOOGLE_CLIENT_SECRET: 'herald-google-secret',
      GOOGLE_DISCOVERY_URL: google.discoveryUrl,
      ...github.config(),
    });
    browser = await launchBrowser();
    linId = await verifiedUser(api, LIN.email, LIN.password, 'Lin');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await google?.stop();
    await github?.close();
  }, 120_000);

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  async function freshPage(viewport: ViewportName = 'desktop', signedInAs?: Page): Promise<Page> {
    const page = await (await newContext(browser, viewport, api.url, signedInAs?.context())).newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 500) problems.push(`${response.status()} ${response.url()}`);
    });
    return page;
  }

  /** Clicks the sign-in page's button of `provider` and waits until the browser is back at Herald, signed in or not. */
  async function clickProvider(page: Page, provider: 'Google' | 'GitHub'): Promise<void> {
    await page.goto('/dashboard/sign-in');
    await page.getByRole('button', { name: `Sign in with ${provider}` }).click();
    await page.waitForURL((url) => SIGNED_IN.test(url.pathname) || (url.pathname === '/dashboard/sign-in' && url.searchParams.has('error')), {
      timeout: 20_000,
    });
  }

  async function me(page: Page): Promise<{ status: number; body: any }> {
    const response = await page.request.get('/dashboard/api/me');
    return { status: response.status(), body: response.ok() ? await response.json() : null };
  }

  /** The sign-in page's alert after a failed round trip; the person is signed out. */
  async function refused(page: Page, words: RegExp): Promise<string> {
    const alert = page.getByRole('alert').filter({ hasText: words });
    await alert.waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await me(page)).status).toBe(401);
    return (await alert.innerText()).trim();
  }

  /** The pages recorded since the last call that had a serious or critical axe violation, with them. */
  function seriousFound(): [string, AxeViolation[]][] {
    const found = Object.entries(violations).filter(([, v]) => v.length);
    for (const name of Object.keys(violations)) delete violations[name];
    return found;
  }

  async function record(page: Page, name: string, viewport: ViewportName): Promise<void> {
    await screenshot(page, name, viewport);
    violations[`${name}-${viewport}`] = await seriousViolations(page);
  }

  it('signs a new user up with Google by its button, and gives them a team', async () => {
    await google.signInAs({ sub: 'google-gina', email: 'gina@people.test', email_verified: true, name: 'Gina' });
    const page = await freshPage();
    await clickProvider(page, 'Google');
    expect(page.url()).toMatch(SIGNED_IN);
    await page.locator('[data-team-switcher]').waitFor();
    expect(await page.locator('[data-team-switcher]').innerText()).toMatch(/^Team:\s*Gina's team\s+us-east-1 · owner/);
    expect((await me(page)).body.user).toMatchObject({ email: 'gina@people.test', name: 'Gina', email_verified: true });
    await page.context().close();
  }, 60_000);

  it('brings a denied Google consent back to sign-in with words, at both widths', async () => {
    await google.denyConsent(true);
    let words: string;
    try {
      const page = await freshPage();
      await clickProvider(page, 'Google');
      words = await refused(page, /declined to let Herald use your Google account/);
      expect(words).toMatch(/not signed in/);
      await record(page, 'sign-in-google-denied', 'desktop');
      // The phone width: the page the round trip landed on, opened at that width.
      const phone = await freshPage('phone');
      await phone.goto(page.url());
      expect(await refused(phone, /declined to let Herald use your Google account/)).toBe(words);
      await record(phone, 'sign-in-google-denied', 'phone');
      await page.context().close();
      await phone.context().close();
    } finally {
      await google.denyConsent(false);
    }
    expect(seriousFound()).toEqual([]);
  }, 60_000);

  it('signs a new user in with GitHub, and brings a denied GitHub consent back with words', async () => {
    github.next = { id: 201, login: 'octo', name: 'Octo Cat', emails: [{ email: 'octo@people.test', primary: true, verified: true }] };
    const page = await freshPage();
    await clickProvider(page, 'GitHub');
    expect(page.url()).toMatch(SIGNED_IN);
    expect((await me(page)).body.user).toMatchObject({ email: 'octo@people.test', name: 'Octo Cat', email_verified: true });
    await page.context().close();

    github.deny = true;
    const denied = await freshPage();
    await clickProvider(denied, 'GitHub');
    await refused(denied, /declined to let Herald use your GitHub account/);
    await denied.context().close();
  }, 60_000);

  it('refuses a GitHub account without a verified address, saying why and where to verify one', async () => {
    // GitHub has verified neither of its addresses.
    github.next = {
      id: 202,
      login: 'ghost',
      name: 'Ghost',
      emails: [
        { email: 'ghost@people.test', primary: true, verified: false },
        { email: 'ghost@elsewhere.test', primary: false, verified: false },
      ],
    };
    const page = await freshPage();
    await clickProvider(page, 'GitHub');
    const words = await refused(page, /no verified email address/);
    expect(words).toContain('github.com/settings/emails');
    await record(page, 'sign-in-github-unverified', 'desktop');
    const phone = await freshPage('phone');
    await phone.goto(page.url());
    expect(await refused(phone, /no verified email address/)).toBe(words);
    await record(phone, 'sign-in-github-unverified', 'phone');
    await page.context().close();
    await phone.context().close();
    expect(seriousFound()).toEqual([]);
  }, 60_000);

  it('links GitHub to an existing user by verified address, links Google on the Account page, and unlinks', async () => {
    // GitHub's verified primary address is Lin's: the click signs Lin in, no second user or team.
    github.next = { id: 203, login: 'lin', name: 'Lin', emails: [{ email: LIN.email, primary: true, verified: true }] };
    const page = await freshPage();
    await clickProvider(page, 'GitHub');
    const teamId = SIGNED_IN.exec(page.url())![1]!;
    const signedIn = await me(page);
    expect(signedIn.body.user.id).toBe(linId);
    expect(signedIn.body.teams).toHaveLength(1);

    await page.getByRole('link', { name: 'Account' }).click();
    const methods = page.getByRole('region', { name: 'Sign-in methods' });
    const method = (name: string) => methods.getByRole('listitem').filter({ hasText: name });
    await method('GitHub').getByText('linked', { exact: true }).waitFor();
    await method('Google').getByText('not linked', { exact: true }).waitFor();
    await method('Email and password').getByText('linked', { exact: true }).waitFor();

    // A Google account with another address is not linked, and the page says why.
    await google.signInAs({ sub: 'google-someone', email: 'someone@people.test', email_verified: true, name: 'Someone' });
    await methods.getByRole('button', { name: 'Link Google' }).click();
    await methods.getByRole('alert').filter({ hasText: 'different email address' }).waitFor({ timeout: 20_000 });
    expect(new URL(page.url()).pathname).toBe(`/dashboard/t/${teamId}/account`);
    await method('Google').getByText('not linked', { exact: true }).waitFor();

    // Lin's own Google account links, and the page says so.
    await google.signInAs({ sub: 'google-lin', email: LIN.email, email_verified: true, name: 'Lin' });
    await methods.getByRole('button', { name: 'Link Google' }).click();
    await methods.getByRole('status').filter({ hasText: 'Google is linked' }).waitFor({ timeout: 20_000 });
    await method('Google').getByText('linked', { exact: true }).waitFor();
    expect(await methods.getByRole('alert').count()).toBe(0);
    await record(page, 'account-sign-in-methods', 'desktop');

    await methods.getByRole('button', { name: 'Unlink GitHub' }).click();
    await method('GitHub').getByText('not linked', { exact: true }).waitFor();
    const accounts = await (await page.request.get('/dashboard/api/auth/list-accounts')).json();
    expect(accounts.map((a: { providerId: string }) => a.providerId).sort()).toEqual(['credential', 'google']);

    // The phone width, in the same session: Google linked, GitHub not.
    const phone = await freshPage('phone', page);
    await page.context().close();
    await phone.goto(`/dashboard/t/${teamId}/account`);
    const phoneMethods = phone.getByRole('region', { name: 'Sign-in methods' });
    await phoneMethods.getByRole('listitem').filter({ hasText: 'Google' }).getByText('linked', { exact: true }).waitFor();
    await phoneMethods.getByRole('button', { name: 'Link GitHub' }).waitFor();
    await record(phone, 'account-sign-in-methods', 'phone');
    await phone.context().close();
    expect(seriousFound()).toEqual([]);
  }, 90_000);

  it('keeps the last way to sign in, and offers a GitHub-only user a password by email rather than a form they cannot use', async () => {
    github.next = { id: 204, login: 'solo', name: 'Solo', emails: [{ email: 'solo@people.test', primary: true, verified: true }] };
    const desktop = await freshPage();
    await clickProvider(desktop, 'GitHub');
    const teamId = SIGNED_IN.exec(desktop.url())![1]!;
    // The phone width in the same session, checked first: the desktop then uses the link.
    const phone = await freshPage('phone', desktop);
    for (const [page, viewport] of [
      [phone, 'phone'],
      [desktop, 'desktop'],
    ] as const) {
      await page.goto(`/dashboard/t/${teamId}/account`);
      const methods = page.getByRole('region', { name: 'Sign-in methods' });
      await methods.getByText('This is your only way to sign in').waitFor();
      await until(async () => methods.getByRole('button', { name: 'Unlink GitHub' }).isDisabled(), 'Unlink GitHub is disabled');
      // No password to change and none to confirm two-factor with: the page says so and offers a link.
      const password = page.getByRole('region', { name: 'Password' });
      await password.getByText('You have no password').waitFor();
      expect(await password.getByLabel(/^Current password/).count()).toBe(0);
      const twoFactor = page.getByRole('region', { name: 'Two-factor authentication' });
      await twoFactor.getByText('Set a password above to turn them on').waitFor();
      expect(await twoFactor.getByRole('button', { name: 'Set up two-factor' }).isVisible()).toBe(false);
      await record(page, 'account-github-only', viewport);
    }
    const password = desktop.getByRole('region', { name: 'Password' });
    await password.getByRole('button', { name: 'Email me a link to set a password' }).click();
    await password.getByRole('status').filter({ hasText: 'We sent a link to solo@people.test' }).waitFor();
    await phone.context().close();
    await desktop.context().close();
    expect(seriousFound()).toEqual([]);
  }, 60_000);
});
