import type { Browser, Page } from 'playwright-core';
import { startTestApi, type TestApi } from '../support/api-harness';
import { atBothWidths, ensureDashboardBuilt, launchBrowser, newContext } from '../support/browser';
import { signInThroughForm, until, verifiedUser } from '../support/dashboard-browser';

// The dashboard as the api role serves it, in Debian's chromium: the SPA and its fallback, its
// headers, the sign-in and sign-up pages (rendered, keyboard-usable, no serious axe violation at
// 1280 and 390 px), and API errors shown as words: the real ones of the dashboard API (a wrong
// password, a 404), and 401 and 5xx bodies played by page.route where a test says so.

// Run in the page (strings: the test's TypeScript has no DOM types). The focused element's type
// attribute or text; its label's text (without Mantine's required asterisk), aria-label or text.
const FOCUSED_TYPE = `document.activeElement?.getAttribute('type') ?? document.activeElement?.textContent ?? ''`;
const FOCUSED_LABEL = `(() => {
  const element = document.activeElement;
  if (!element) return '';
  const label = element.id ? document.querySelector('label[for="' + element.id + '"]')?.textContent : null;
  return (label ?? element.getAttribute('aria-label') ?? element.textContent ?? '').replace(/\\s*\\*$/, '').trim();
})()`;

const ADA = { email: 'ada@example.com', password: 'correct horse battery' };

describe('dashboard SPA (browser)', () => {
  let api: TestApi;
  let browser: Browser;

  beforeAll(async () => {
    ensureDashboardBuilt();
    api = await startTestApi();
    browser = await launchBrowser();
    await verifiedUser(api, ADA.email, ADA.password, 'Ada');
  }, 120_000);

  // Closing Chromium and the api (its schema, Redis keys and NATS streams dropped) took over 60 s on a loaded machine.
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  }, 120_000);

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers, redirect: 'manual' });

  /** A page that records the console's CSP reports and uncaught errors, to assert none happened. */
  async function openPage(path: string, viewport: 'desktop' | 'phone' = 'desktop'): Promise<{ page: Page; problems: string[] }> {
    const context = await newContext(browser, viewport, api.url);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });
    await page.goto(path);
    return { page, problems };
  }

  describe('served by the api role', () => {
    it('answers index.html at /dashboard/ with a strict CSP and no caching', async () => {
      const response = await get('/dashboard/');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(await response.text()).toContain('<div id="root"></div>');
    });

    it('answers index.html for client routes and /dashboard, and sends browsers at / to /dashboard/', async () => {
      const index = await (await get('/dashboard/')).text();
      for (const path of ['/dashboard', '/dashboard/sign-in', '/dashboard/t/0190a1b2-0000-7000-8000-000000000000/emails/abc?x=1']) {
        const response = await get(path);
        expect(response.status).toBe(200);
        expect(await response.text()).toBe(index);
      }
      const root = await get('/', { accept: 'text/html,application/xhtml+xml' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/dashboard/');
    });

    it('serves hashed assets with immutable caching, and a missing asset is a 404, not the SPA', async () => {
      const index = await (await get('/dashboard/')).text();
      const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)?.[1];
      expect(script).toBeDefined();
      const asset = await get(script!);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const missing = await get('/dashboard/assets/nothing-here.js');
      expect(missing.status).toBe(404);
      expect(await missing.text()).not.toContain('<div id="root">');
    });

    it('keeps an unknown /dashboard/api/* path a JSON 404 and the REST API behind its key', async () => {
      const response = await get('/dashboard/api/nothing');
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        statusCode: 404,
        name: 'not_found',
        message: 'No dashboard API route matches GET /dashboard/api/nothing.',
      });
      const rest = await get('/emails');
      expect(rest.status).toBe(401);
    });
  });

  describe('sign-in and sign-up pages', () => {
    it('renders sign-in with no serious accessibility violation at 1280 and 390 px', async () => {
      const violations = await atBothWidths(browser, api.url, 'sign-in', async (page) => {
        await page.goto('/dashboard/sign-in');
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      });
      expect(violations).toEqual({ desktop: [], phone: [] });
    });

    it('renders sign-up (the regions of GET /dashboard/api/regions listed) with no serious accessibility violation at both widths', async () => {
      const regions = (await (await get('/dashboard/api/regions')).json()) as { data: string[]; default: string };
      expect(regions.data).toContain(regions.default);
      let listed: string[] = [];
      const violations = await atBothWidths(browser, api.url, 'sign-up', async (page) => {
        await page.goto('/dashboard/sign-up');
        const region = page.getByRole('combobox', { name: 'Region' });
        await until(async () => (await region.inputValue()) === regions.default, 'the default region is chosen');
        await region.click();
        await page.getByRole('option', { name: regions.data[regions.data.length - 1] }).waitFor();
        listed = await page.getByRole('option').allTextContents();
        await page.keyboard.press('Escape');
      });
      expect(listed).toEqual(regions.data);
      expect(violations).toEqual({ desktop: [], phone: [] });
    });

    it.each([
      ['verify-email', '/dashboard/verify-email?email=ada%40example.com', 'Check your inbox'],
      ['forgot-password', '/dashboard/forgot-password', 'Reset your password'],
      ['reset-password', '/dashboard/reset-password?token=abc', 'Choose a new password'],
      ['two-factor', '/dashboard/two-factor', 'Two-factor authentication'],
      ['invitation', '/dashboard/invitations/abc', 'Join a team'],
    ])('renders %s with no serious accessibility violation at both widths', async (name, path, heading) => {
      const violations = await atBothWidths(browser, api.url, name, async (page) => {
        await page.goto(path);
        await page.getByRole('heading', { name: heading }).waitFor();
      });
      expect(violations).toEqual({ desktop: [], phone: [] });
    });

    it('shows a failed Google or GitHub sign-in (better-auth ?error=) in words', async () => {
      // The page names the provider it is told of (the SPA's errorCallbackURL carries it), else speaks of "the provider".
      const { page } = await openPage('/dashboard/sign-in?error=access_denied');
      await page
        .getByRole('alert')
        .filter({ hasText: 'You declined to let Herald use your account at the provider, so you are not signed in.' })
        .waitFor();
      await page.goto('/dashboard/sign-in?provider=github&error=email_not_found');
      await page.getByRole('alert').filter({ hasText: 'Your GitHub account has no verified email address' }).waitFor();
      await page.context().close();
    });

    it('is usable from the keyboard alone, and a failed sign-in is shown in words', async () => {
      const { page, problems } = await openPage('/dashboard/sign-in');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const focused = () => page.evaluate<string>(FOCUSED_TYPE);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('email');
      await page.keyboard.type(ADA.email);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('password');
      await page.keyboard.type('not her password');
      await page.keyboard.press('Enter');
      // better-auth's real answer to a wrong password, in words, and the form kept as typed.
      await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
      expect(page.url()).toMatch(/\/dashboard\/sign-in$/);
      expect(await page.getByLabel('Email').inputValue()).toBe(ADA.email);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it('reaches every control of sign-up by Tab, in order', async () => {
      const { page, problems } = await openPage('/dashboard/sign-up', 'phone');
      await page.getByRole('heading', { name: 'Create your account' }).waitFor();
      const labels: string[] = [];
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press('Tab');
        labels.push(await page.evaluate<string>(FOCUSED_LABEL));
      }
      const order = ['Your name', 'Email', 'Password', 'Team name', 'Region', 'Create account', 'Sign in'];
      // Twelve presses may wrap around to the start; the first visit of each control is the order.
      expect([...new Set(labels.filter((label) => order.includes(label)))]).toEqual(order);
      // This api has no Google or GitHub client id: no button offers them (the social suite has both).
      expect(await page.getByRole('button', { name: /with (Google|GitHub)/ }).count()).toBe(0);
      expect(problems).toEqual([]);
      await page.context().close();
    });
  });

  describe('API errors in words', () => {
    const herald = (statusCode: number, name: string, message: string) => ({
      status: statusCode,
      contentType: 'application/json',
      body: JSON.stringify({ statusCode, name, message }),
    });

    it('sends a signed-out visitor (401 session_required) to sign-in', async () => {
      const context = await newContext(browser, 'desktop', api.url);
      await context.route('**/dashboard/api/me', (route) => route.fulfill(herald(401, 'session_required', 'Sign in to use the dashboard.')));
      const page = await context.newPage();
      await page.goto('/dashboard/t/0190a1b2-0000-7000-8000-000000000000/domains');
      await page.waitForURL(/\/dashboard\/sign-in/);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await context.close();
    });

    it("shows a 500's message, and words for a body that is not Herald's", async () => {
      const context = await newContext(browser, 'phone', api.url);
      let answer = herald(500, 'application_error', 'Postgres did not answer in time; try again.');
      await context.route('**/dashboard/api/me', (route) => route.fulfill(answer));
      const page = await context.newPage();
      await page.goto('/dashboard/t/0190a1b2-0000-7000-8000-000000000000/emails');
      await page.getByRole('alert').filter({ hasText: 'Postgres did not answer in time; try again.' }).waitFor({ timeout: 15_000 });
      answer = { status: 502, contentType: 'text/html', body: '<html><body>Bad Gateway</body></html>' };
      await page.reload();
      await page.getByRole('alert').filter({ hasText: 'Herald is not reachable right now. Try again in a moment.' }).waitFor({ timeout: 15_000 });
      await context.close();
    });

    it('shows a real 404 of the dashboard API in words', async () => {
      const { page, problems } = await openPage('/dashboard/sign-in');
      const teamId = await signInThroughForm(page, ADA.email, ADA.password);
      const missing = `/dashboard/api/teams/${teamId}/domains/0190a1b2-0000-7000-8000-000000000000`;
      const answer = await page.request.get(missing);
      expect(answer.status()).toBe(404);
      const { message } = (await answer.json()) as { message: string };
      expect(message).toMatch(/\w+ \w+/);
      await page.goto(`/dashboard/t/${teamId}/domains/0190a1b2-0000-7000-8000-000000000000`);
      await page.getByRole('alert').filter({ hasText: message }).waitFor();
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it('answers an unknown client route with a page that says so', async () => {
      const { page } = await openPage('/dashboard/no-such-page');
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await page.context().close();
    });
  });
});
