import type { INestApplicationContext } from '@nestjs/common';
import { eventually } from '@herald/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Resend } from 'resend';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import {
  ensureDashboardBuilt,
  launchBrowser,
  newContext,
  screenshot,
  seriousViolations,
  sidewaysScrolling,
  truncated,
  type AxeViolation,
  type ViewportName,
} from '../support/browser';
import { shownRecords, signInThroughForm, startOutsideWorld, verifiedUser } from '../support/dashboard-browser';
import { DashboardWorld } from '../support/dashboard-world';

const OWNER = { email: 'grace@people.test', password: 'grace password 1' };
const DOMAIN = 'grace.test';

/**
 * The signed-in dashboard in a real Chromium against Herald's api, worker, smtp and webhooks roles: a domain
 * added in the browser and verified against the records the page shows (published in the test's
 * DNS server), emails sent with the `resend` SDK appearing without a reload and narrowed by the
 * filters, an email's delivered event, a hostile email that runs nothing and loads nothing, and
 * every page with no serious axe violation, screenshotted at 1280 and 390 px.
 */
describe('dashboard signed-in pages (browser)', () => {
  let world: DashboardWorld;
  let outside: Awaited<ReturnType<typeof startOutsideWorld>>;
  let webhooks: INestApplicationContext;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let teamId: string;
  let resend: Resend;
  let api: Awaited<ReturnType<DashboardWorld['client']>>;
  const t = (path: string) => `/dashboard/api/teams/${teamId}${path}`;
  const ids: Record<string, string> = {};
  /** Dashboard API answers of 400 and up, uncaught page errors; requests answered by anything but Herald. */
  const problems: string[] = [];
  const offsite: string[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    world = await DashboardWorld.start({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    outside = await startOutsideWorld();
    webhooks = await startWebhooks(world.delivery.api.config, {}, { pollIntervalMs: 25, attemptTimeoutMs: 3_000 });
    world.inbox.recipientRule('nobody@people.test', { reject: '550 5.1.1 no such user' });
    browser = await launchBrowser();
    await verifiedUser(world.delivery.api, OWNER.email, OWNER.password, 'Grace');
    context = await newContext(browser, 'desktop', world.url);
    page = await context.newPage();
    watch(page, 'desktop');
    teamId = await signInThroughForm(page, OWNER.email, OWNER.password);
    // What the browser tests do not create themselves: an endpoint, a suppression, an invitation.
    api = await world.client();
    await api.auth('/sign-in/email', OWNER);
    ids.webhook = (await api.post(t('/webhooks'), { endpoint: `${outside.url}/hook`, events: ['email.delivered', 'email.bounced'] })).body.id;
    await api.post(t('/suppressions'), { email: 'gone@people.test' });
    await api.post(t('/invitations'), { email: 'linus@people.test', role: 'admin' });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await webhooks?.close();
    await outside?.close();
    await world?.close();
  });

  function watch(target: Page, viewport: ViewportName): void {
    target.on('pageerror', (error) => problems.push(`${viewport} pageerror: ${error.message}`));
    target.on('response', (response) => {
      if (response.url().includes('/dashboard/api/') && response.status() >= 400) problems.push(`${viewport} ${response.status()} ${response.url()}`);
    });
    // A request the browser started and CSP then blocked never leaves it; one that got an answer did.
    target.on('requestfinished', (request) => {
      if (!request.url().startsWith(world.url) && !/^(data|blob|about):/.test(request.url())) offsite.push(request.url());
    });
  }

  const subjects = () => page.locator('table tbody tr td:nth-child(2)').allTextContents();

  it('adds a domain, and Verify turns it verified once the records it shows are published', async () => {
    await page.goto(`/dashboard/t/${teamId}/domains`);
    await page.getByText('No domains yet').waitFor();
    await page.getByRole('button', { name: 'Add domain' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a domain' });
    await dialog.getByLabel(/^Domain name/).fill(DOMAIN);
    await dialog.getByRole('button', { name: 'Add domain' }).click();
    await page.waitForURL(/\/domains\/[0-9a-f-]{36}$/);
    ids.domain = page.url().split('/').pop()!;
    await page.getByRole('heading', { name: DOMAIN }).waitFor();

    const records = await shownRecords(page);
    expect(records.map((r) => r.type).sort()).toEqual(expect.arrayContaining(['MX', 'TXT']));
    for (const record of records) {
      const name = record.name === '@' || record.name === DOMAIN ? DOMAIN : `${record.name}.${DOMAIN}`;
      if (record.type === 'TXT') world.delivery.dns.set(name, 'TXT', [record.value]);
      if (record.type === 'MX') world.delivery.dns.set(name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
    }
    await page.getByRole('button', { name: 'Verify DNS records' }).click();
    // The page polls while the check runs: the domain turns verified, and what DNS answered is shown.
    const header = page.getByRole('heading', { name: DOMAIN }).locator('xpath=..');
    await header.getByText('verified', { exact: true }).waitFor({ timeout: 20_000 });
    // The records DKIM and SPF are required to send: each verified (DMARC is recommended, reported only).
    await eventually(async () => {
      for (const row of await page.locator('table tbody tr').all()) {
        const purpose = (await row.locator('td').first().innerText()).trim();
        if (purpose === 'DKIM' || purpose === 'SPF')
          expect([purpose, (await row.locator('td').nth(4).innerText()).trim()]).toEqual([purpose, 'verified']);
      }
    }, 5_000);
    const dkim = records.find((r) => r.value.startsWith('v=DKIM1'))!;
    expect(await page.locator('table tbody tr').filter({ hasText: dkim.name }).locator('td').nth(5).innerText()).toContain('v=DKIM1');
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows emails sent with the resend SDK within 2 s without a reload, narrows them with filters, and shows the delivered event', async () => {
    // A key made in the browser: its token is shown once.
    await page.goto(`/dashboard/t/${teamId}/api-keys`);
    await page.getByRole('button', { name: 'Create API key' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Name/).fill('Production');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const token = (await dialog.getByText(/^hr_/).textContent())!.trim();
    await dialog.getByRole('button', { name: 'Done' }).click();
    resend = new Resend(token, { baseUrl: world.url });

    await page.goto(`/dashboard/t/${teamId}/emails`);
    await page.getByText('No emails yet').waitFor();
    const mail: [string, string][] = [
      ['Order shipped', 'ann@people.test'],
      ['Invoice ready', 'bob@people.test'],
      ['Order lost', 'nobody@people.test'],
    ];
    for (const [subject, to] of mail) {
      const sent = await resend.emails.send({ from: `Shop <shop@${DOMAIN}>`, to, subject, html: `<p>${subject}</p>`, text: subject });
      expect(sent.error).toBeNull();
      ids[subject] = sent.data!.id;
      // Within 2 s of the API accepting it, on the page that was already open.
      await page.locator('table tbody tr').filter({ hasText: subject }).waitFor({ timeout: 2_000 });
    }
    expect(await subjects()).toEqual(['Order lost', 'Invoice ready', 'Order shipped']);
    await page.locator('table tbody tr').filter({ hasText: 'Order lost' }).getByText('bounced').waitFor({ timeout: 20_000 });
    await page.locator('table tbody tr').filter({ hasText: 'Order shipped' }).getByText('delivered').waitFor({ timeout: 20_000 });

    // The API key picker: an email sent with another key, then each key narrows the feed to its own.
    const staging = (await api.post(t('/api-keys'), { name: 'Staging', permission: 'sending_access' })).body;
    const sentWithStaging = await new Resend(staging.token, { baseUrl: world.url }).emails.send({
      from: `Shop <shop@${DOMAIN}>`,
      to: 'cy@people.test',
      subject: 'Staging check',
      text: 'from staging',
    });
    expect(sentWithStaging.error).toBeNull();
    await page.locator('table tbody tr').filter({ hasText: 'Staging check' }).waitFor({ timeout: 5_000 });
    await page.reload();
    await page.getByRole('combobox', { name: 'API key' }).click();
    await page.getByRole('option', { name: 'Production', exact: true }).click();
    await eventually(async () => expect(await subjects()).toEqual(['Order lost', 'Invoice ready', 'Order shipped']), 5_000);
    await page.getByRole('combobox', { name: 'API key' }).click();
    await page.getByRole('option', { name: 'Staging', exact: true }).click();
    await eventually(async () => expect(await subjects()).toEqual(['Staging check']), 5_000);
    await page.goto(`/dashboard/t/${teamId}/emails`);
    await page.locator('table tbody tr').filter({ hasText: 'Order lost' }).waitFor();

    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'bounced', exact: true }).click();
    await eventually(async () => expect(await subjects()).toEqual(['Order lost']), 5_000);

    await page.goto(`/dashboard/t/${teamId}/emails`);
    await page.getByLabel('Search').fill('order');
    await eventually(async () => expect(await subjects()).toEqual(['Order lost', 'Order shipped']), 5_000);
    await page.getByLabel('Search').fill('bob@people.test');
    await eventually(async () => expect(await subjects()).toEqual(['Invoice ready']), 5_000);
    await page.getByLabel('Search').fill('no such words');
    await page.getByText('No emails match').waitFor();

    await page.goto(`/dashboard/t/${teamId}/emails`);
    await page.getByRole('link', { name: 'ann@people.test' }).click();
    await page.waitForURL(new RegExp(`/emails/${ids['Order shipped']}$`));
    await page.getByRole('heading', { name: 'Order shipped' }).waitFor();
    const events = page.locator('.mantine-Paper-root').filter({ hasText: 'Events' });
    await events.getByText('delivered', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await events.innerText()).toContain('ann@people.test');
    expect(problems).toEqual([]);
  }, 90_000);

  it('previews a hostile email with no script run and nothing remote loaded, and shows an HTML subject as text', async () => {
    const subject = `<img src=x onerror="window.__heraldPwned='subject'"><b>Bold</b> offer`;
    const html = [
      '<p>Hello from the preview</p>',
      `<script>window.top.__heraldPwned = 'script'; document.body.setAttribute('data-pwned', 'script');</script>`,
      `<img src="x" onerror="window.top.__heraldPwned = 'onerror'; document.body.setAttribute('data-pwned', 'onerror')">`,
      `<img src="${outside.url}/pixel.png" alt="remote">`,
      `<div style="background-image: url(${outside.url}/background.png)">styled</div>`,
    ].join('\n');
    const sent = await resend.emails.send({ from: `Shop <shop@${DOMAIN}>`, to: 'ann@people.test', subject, html });
    expect(sent.error).toBeNull();

    await page.goto(`/dashboard/t/${teamId}/emails`);
    const row = page.locator('table tbody tr').filter({ hasText: '<b>Bold</b> offer' });
    await row.waitFor();
    expect(await row.locator('b, img').count()).toBe(0);

    await page.goto(`/dashboard/t/${teamId}/emails/${sent.data!.id}`);
    await page.getByRole('heading', { name: subject }).waitFor();
    const preview = page.frameLocator('iframe[title="HTML preview of the email"]');
    await preview.getByText('Hello from the preview').waitFor();
    await page.getByText('Remote images and styles are blocked').waitFor();
    await page.waitForLoadState('networkidle');

    expect(await page.evaluate('window.__heraldPwned')).toBeUndefined();
    expect(await preview.locator('body[data-pwned]').count()).toBe(0);
    expect(await page.locator('h1 b, h1 img').count()).toBe(0);
    expect(outside.remoteHits).toEqual([]);
    expect(offsite).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  it('searches suppressions by part of an address, and shows the audit log and the account’s own activity', async () => {
    await api.post(t('/suppressions'), { email: 'Someone.Else@Example.org' });
    await page.goto(`/dashboard/t/${teamId}/suppressions`);
    const addresses = () => page.locator('table tbody tr td:nth-child(1)').allTextContents();
    // nobody@people.test hard-bounced (the first test): Herald listed it itself.
    await eventually(async () => expect(await addresses()).toEqual(['someone.else@example.org', 'nobody@people.test', 'gone@people.test']), 5_000);
    await page.getByLabel('Search').fill('ELSE@');
    await eventually(async () => expect(await addresses()).toEqual(['someone.else@example.org']), 5_000);
    await page.getByLabel('Search').fill('people');
    await eventually(async () => expect(await addresses()).toEqual(['nobody@people.test', 'gone@people.test']), 5_000);
    await page.getByLabel('Search').fill('zzz');
    await page.getByText('No suppressed address matches').waitFor();

    await page.goto(`/dashboard/t/${teamId}/team`);
    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const created = page.locator('table tbody tr').filter({ hasText: 'Created an API key' }).filter({ hasText: 'name: Production' });
    await created.waitFor();
    expect(await created.innerText()).toContain(OWNER.email);
    expect(await created.innerText()).toMatch(/127\.0\.0\.1/);

    await page.goto(`/dashboard/t/${teamId}/account`);
    const activity = page.getByRole('region', { name: 'Recent activity' });
    await activity.getByText('Signed in').filter({ visible: true }).first().waitFor();
    expect(await activity.innerText()).toContain('method: password');
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows every page with its data, no error, and no serious accessibility violation at both widths', async () => {
    await eventually(async () => expect(outside.hooks).toBeGreaterThan(0), 15_000);
    const pages: [string, string, string][] = [
      ['domains', 'domains', DOMAIN],
      ['domain-detail', `domains/${ids.domain}`, 'v=DKIM1'],
      ['emails', 'emails', 'Invoice ready'],
      ['email-detail', `emails/${ids['Order shipped']}`, 'ann@people.test'],
      ['api-keys', 'api-keys', 'Production'],
      ['webhooks', 'webhooks', `${outside.url}/hook`],
      ['webhook-detail', `webhooks/${ids.webhook}`, 'success'],
      ['suppressions', 'suppressions', 'gone@people.test'],
      ['team', 'team', 'linus@people.test'],
      ['audit-log', 'audit-log', 'Created an API key'],
      ['account', 'account', 'Signed in'],
    ];
    const found: Record<string, AxeViolation[]> = {};
    for (const viewport of ['desktop', 'phone'] as ViewportName[]) {
      let target = page;
      if (viewport === 'phone') {
        target = await (await newContext(browser, 'phone', world.url)).newPage();
        watch(target, viewport);
        await signInThroughForm(target, OWNER.email, OWNER.password);
      }
      for (const [name, path, text] of pages) {
        const started = Date.now();
        await target.goto(`/dashboard/t/${teamId}/${path}`);
        try {
          await target.getByText(text).filter({ visible: true }).first().waitFor({ timeout: 10_000 });
        } catch {
          problems.push(`${viewport} ${name}: "${text}" not shown within 10 s`);
        }
        if (Date.now() - started > 10_000) problems.push(`${viewport} ${name} took ${Date.now() - started} ms`);
        const alerts = await target.getByRole('alert').allTextContents();
        if (alerts.length) problems.push(`${viewport} ${name} alerts: ${alerts.join(' | ')}`);
        await screenshot(target, name, viewport);
        for (const sideways of await sidewaysScrolling(target)) problems.push(`${viewport} ${name} scrolls sideways: ${sideways}`);
        if (!(await target.locator('[data-team-switcher]').innerText()).includes("Grace's team"))
          problems.push(`${viewport} ${name}: no team switcher`);
        if (await truncated(target, '[data-team-switcher] p')) problems.push(`${viewport} ${name}: the team's name is cut in the header`);
        // axe cannot run inside the preview's sandbox (no scripts) and would wait for it; the preview is the sender's HTML.
        if (name === 'email-detail') await target.getByRole('tab', { name: 'Text' }).click();
        found[`${name}-${viewport}`] = await seriousViolations(target);
      }
      if (target !== page) await target.context().close();
    }
    expect(problems).toEqual([]);
    expect(Object.entries(found).filter(([, v]) => v.length)).toEqual([]);
  }, 240_000);
});
