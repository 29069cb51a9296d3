import { generate } from 'otplib';
import type { Browser, CDPSession, Page } from 'playwright-core';
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
import { signInThroughForm, verifiedUser } from '../support/dashboard-browser';

const PAT = { email: 'pat@people.test', password: 'pat password 12' };
const SIGNED_IN = /\/dashboard\/t\/([0-9a-f-]{36})\/domains/;

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  privateKey: string;
  userHandle: string;
  signCount: number;
}

/**
 * Passkeys in a real Chromium, with Chrome's virtual authenticator (DevTools' WebAuthn domain: a
 * CTAP2 platform authenticator that keeps discoverable credentials and verifies the person): one
 * added on the Account page, a passwordless sign-in with it, the same passkey in place of the
 * two-factor code, a passkey that does not verify the person refused, and a removed passkey
 * refused, each in words. The api listens at `localhost`: WebAuthn refuses an IP address as the
 * site a passkey belongs to (at 127.0.0.1 the Account page says so instead of offering one).
 */
describe('dashboard passkeys (browser)', () => {
  let api: TestApi;
  let browser: Browser;
  let patId: string;
  let teamId: string;
  /**
   * The passkey the Account page made, as the last authenticator that used it holds it (to put
   * it in the next browser): its signature counter must keep rising, or Herald refuses it as a clone.
   */
  let credential: VirtualCredential;
  const problems: string[] = [];
  const violations: Record<string, AxeViolation[]> = {};

  beforeAll(async () => {
    ensureDashboardBuilt();
    api = await startTestApi({ API_HOST: 'localhost' });
    expect(api.url).toMatch(/^http:\/\/localhost:\d+$/);
    browser = await launchBrowser();
    patId = await verifiedUser(api, PAT.email, PAT.password, 'Pat');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  }, 120_000);

  afterEach(() => expect(problems.splice(0)).toEqual([]));

  /** A page of a new browser context with a virtual authenticator attached, holding `credentials`. */
  async function withAuthenticator(
    viewport: ViewportName,
    options: { credentials?: VirtualCredential[] } = {},
  ): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const page = await (await newContext(browser, viewport, api.url)).newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 500) problems.push(`${response.status()} ${response.url()}`);
    });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    for (const held of options.credentials ?? []) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: held });
    return { page, cdp, authenticatorId };
  }

  async function held(cdp: CDPSession, authenticatorId: string): Promise<VirtualCredential[]> {
    return (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as VirtualCredential[];
  }

  /** Closes the page's browser context, keeping the passkey as its authenticator holds it now. */
  async function done(page: Page, cdp: CDPSession, authenticatorId: string): Promise<void> {
    credential = (await held(cdp, authenticatorId)).find((c) => c.credentialId === credential.credentialId) ?? credential;
    await page.context().close();
  }

  async function me(page: Page): Promise<{ status: number; body: any }> {
    const response = await page.request.get('/dashboard/api/me');
    return { status: response.status(), body: response.ok() ? await response.json() : null };
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await me(page)).status).toBe(401);
  }

  async function signedIn(page: Page): Promise<void> {
    try {
      await page.waitForURL(SIGNED_IN, { timeout: 15_000 });
    } catch (error) {
      const alerts = await page.getByRole('alert').allTextContents();
      throw new Error(`not signed in: at ${page.url()}, alerts: ${alerts.join(' | ') || 'none'}`, { cause: error });
    }
  }

  /** Waits for an alert holding `words`; on a timeout, says which alerts the page shows instead. */
  async function refusedWith(page: Page, words: string): Promise<void> {
    try {
      await page.getByRole('alert').filter({ hasText: words }).waitFor({ timeout: 15_000 });
    } catch (error) {
      const alerts = await page.getByRole('alert').allTextContents();
      throw new Error(`no alert saying "${words}" at ${page.url()}; alerts: ${alerts.join(' | ') || 'none'}`, { cause: error });
    }
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

  it('adds a passkey on the Account page, signs out, and signs in with it without a password', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator('desktop');
    teamId = await signInThroughForm(page, PAT.email, PAT.password);
    await page.getByRole('link', { name: 'Account' }).click();
    const passkeys = page.getByRole('region', { name: 'Passkeys' });
    await passkeys.getByText('No passkeys yet').waitFor();
    await passkeys.getByLabel('Passkey name').fill('Work laptop');
    await passkeys.getByRole('button', { name: 'Add a passkey' }).click();
    await passkeys.getByRole('status').filter({ hasText: 'The passkey is added' }).waitFor({ timeout: 15_000 });
    await passkeys
      .getByRole('listitem')
      .filter({ hasText: /^Work laptop · added / })
      .waitFor();

    // The authenticator keeps one discoverable credential for this site, with the account's user handle.
    const credentials = await held(cdp, authenticatorId);
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
    credential = credentials[0]!;
    await record(page, 'account-passkey', 'desktop');

    await signOut(page);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await signedIn(page);
    expect((await me(page)).body.user).toMatchObject({ id: patId, email: PAT.email });
    // The authenticator signed: its counter moved on from the registration's.
    expect((await held(cdp, authenticatorId))[0]!.signCount).toBeGreaterThan(credential.signCount);
    // The team's audit log holds the passkey's addition and the sign-in by it.
    const log = await (await page.request.get(`/dashboard/api/teams/${teamId}/audit-log`)).json();
    const actions = log.data.map(
      (e: { action: string; detail: { method?: string } }) => `${e.action}${e.detail.method ? `:${e.detail.method}` : ''}`,
    );
    expect(actions).toEqual(expect.arrayContaining(['mfa.passkey_added', 'user.signed_in:passkey']));
    await done(page, cdp, authenticatorId);
  }, 60_000);

  it('signs in with the same passkey in another browser at phone width', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator('phone', { credentials: [credential] });
    await page.goto('/dashboard/sign-in');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await signedIn(page);
    await page.goto(`/dashboard/t/${teamId}/account`);
    await page.getByRole('region', { name: 'Passkeys' }).getByText('Work laptop').waitFor();
    await record(page, 'account-passkey', 'phone');
    await done(page, cdp, authenticatorId);
    expect(seriousFound()).toEqual([]);
  }, 60_000);

  it('with two-factor on, the password asks for a code, and the passkey stands in for it; a passkey sign-in asks for no code', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator('desktop', { credentials: [credential] });
    await signInThroughForm(page, PAT.email, PAT.password);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel(/^Your password/).fill(PAT.password);
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const uri = (await page.getByText(/^otpauth:\/\/totp\//).textContent())!;
    const secret = new URL(uri).searchParams.get('secret')!;
    await page.getByLabel(/^Code from the app/).fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').filter({ hasText: 'Save your backup codes' }).waitFor();
    expect((await me(page)).body.user.two_factor_enabled).toBe(true);
    await signOut(page);

    // The password alone leads to the second step, which offers the passkey beside the code.
    await page.getByLabel('Email').fill(PAT.email);
    await page.getByLabel(/^Password/).fill(PAT.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/dashboard\/two-factor/);
    await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    expect((await me(page)).status).toBe(401);
    await record(page, 'two-factor', 'desktop');
    // The same step at phone width, with the half-done sign-in's cookies.
    const phone = await (await newContext(browser, 'phone', api.url, page.context())).newPage();
    await phone.goto('/dashboard/two-factor');
    await phone.getByRole('button', { name: 'Use a passkey instead' }).waitFor();
    await record(phone, 'two-factor', 'phone');
    await phone.context().close();
    await page.getByRole('button', { name: 'Use a passkey instead' }).click();
    await signedIn(page);
    expect((await me(page)).body.user.id).toBe(patId);
    await signOut(page);

    // From the sign-in page, the passkey is the whole sign-in: no code is asked.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await signedIn(page);
    expect((await me(page)).body.user).toMatchObject({ id: patId, two_factor_enabled: true });
    await done(page, cdp, authenticatorId);

    expect(seriousFound()).toEqual([]);
  }, 60_000);

  it('refuses, in words, a passkey sign-in in which the authenticator did not verify the person', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator('desktop', { credentials: [credential] });
    // A client that asks the authenticator not to verify the person (as a security key without a
    // PIN answers anyway): the sign-in options the page receives say "discouraged", so the
    // authenticator signs on presence alone, and Herald must refuse the signature it gets.
    await page.route('**/dashboard/api/auth/passkey/generate-authenticate-options', async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, json: { ...(await response.json()), userVerification: 'discouraged' } });
    });
    await page.goto('/dashboard/sign-in');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await refusedWith(page, 'did not check that it is you');
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect((await me(page)).status).toBe(401);
    await done(page, cdp, authenticatorId);
  }, 60_000);

  it('removes the passkey on the Account page; a sign-in with it is then refused in words', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator('desktop', { credentials: [credential] });
    await page.goto('/dashboard/sign-in');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await signedIn(page);
    await page.goto(`/dashboard/t/${teamId}/account`);
    const passkeys = page.getByRole('region', { name: 'Passkeys' });
    await passkeys.getByRole('button', { name: 'Remove passkey Work laptop' }).click();
    await passkeys.getByText('No passkeys yet').waitFor();
    await signOut(page);

    // The browser still holds it; Herald no longer knows it.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await refusedWith(page, 'Herald does not know that passkey');
    expect((await me(page)).status).toBe(401);
    await done(page, cdp, authenticatorId);
  }, 60_000);
});
