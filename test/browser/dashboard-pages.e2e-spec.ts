import type { Browser, Page } from 'playwright-core';
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
import { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld } from '../support/dashboard-world';

const OWNER = { email: 'grace@people.test', password: 'grace password 1' };

/**
 * Every signed-in page of the dashboard, with real data made through the dashboard API and the
 * REST API (a domain, emails, a key, a webhook, a suppression, an invitation): each page shows
 * its data with no error, axe finds no serious or critical violation, and a screenshot of each
 * is written at 1280 and 390 px.
 */
describe('dashboard signed-in pages (browser)', () => {
  let world: DashboardWorld;
  let browser: Browser;
  let client: DashboardClient;
  let teamId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ensureDashboardBuilt();
    world = await DashboardWorld.start({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    browser = await launchBrowser();
    await verifiedUser(world.delivery.api, OWNER.email, OWNER.password, 'Grace');
    client = await world.client();
    const signIn = await client.auth('/sign-in/email', OWNER);
    if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}`);
    teamId = (await client.get('/dashboard/api/me')).body.teams[0].id;
    const t = (path: string) => `/dashboard/api/teams/${teamId}${path}`;
    ids.domain = (await client.post(t('/domains'), { name: 'grace.test' })).body.id;
    world.delivery.dns.set('grace.test', 'TXT', []);
    const key = (await client.post(t('/api-keys'), { name: 'Production', permission: 'full_access' })).body;
    ids.key = key.id;
    ids.webhook = (await client.post(t('/webhooks'), { endpoint: 'http://127.0.0.1:9/hook', events: ['email.delivered'] })).body.id;
    await client.post(t('/suppressions'), { email: 'gone@people.test', reason: 'manual' });
    await client.post(t('/invitations'), { email: 'linus@people.test', role: 'admin' });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  const pages: [string, (teamId: string) => string, string][] = [
    ['domains', (t) => `/dashboard/t/${t}/domains`, 'grace.test'],
    ['domain-detail', (t) => `/dashboard/t/${t}/domains/${ids.domain}`, 'grace.test'],
    ['emails', (t) => `/dashboard/t/${t}/emails`, 'Emails'],
    ['api-keys', (t) => `/dashboard/t/${t}/api-keys`, 'Production'],
    ['webhooks', (t) => `/dashboard/t/${t}/webhooks`, 'http://127.0.0.1:9/hook'],
    ['webhook-detail', (t) => `/dashboard/t/${t}/webhooks/${ids.webhook}`, 'http://127.0.0.1:9/hook'],
    ['suppressions', (t) => `/dashboard/t/${t}/suppressions`, 'gone@people.test'],
    ['team', (t) => `/dashboard/t/${t}/team`, 'linus@people.test'],
    ['account', (t) => `/dashboard/t/${t}/account`, OWNER.email],
  ];

  it('shows every page with its data, no error, and no serious accessibility violation at both widths', async () => {
    const found: Record<string, AxeViolation[]> = {};
    const problems: string[] = [];
    for (const viewport of ['desktop', 'phone'] as ViewportName[]) {
      const context = await newContext(browser, viewport, world.url);
      const page: Page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`${viewport} pageerror: ${error.message}`));
      page.on('response', (response) => {
        if (response.url().includes('/dashboard/api/') && response.status() >= 400)
          problems.push(`${viewport} ${response.status()} ${response.url()}`);
      });
      await signInThroughForm(page, OWNER.email, OWNER.password);
      for (const [name, path, text] of pages) {
        await page.goto(path(teamId));
        await page.getByText(text).first().waitFor();
        await page.waitForLoadState('networkidle');
        const alerts = await page.getByRole('alert').allTextContents();
        if (alerts.length) problems.push(`${viewport} ${name} alerts: ${alerts.join(' | ')}`);
        await screenshot(page, name, viewport);
        found[`${name}-${viewport}`] = await seriousViolations(page);
      }
      await context.close();
    }
    expect(problems).toEqual([]);
    expect(Object.entries(found).filter(([, v]) => v.length)).toEqual([]);
  }, 180_000);
});
