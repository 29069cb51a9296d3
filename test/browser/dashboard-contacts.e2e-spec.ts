import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { ContactImportRunner, ContactsService, SegmentsService, TopicsService } from '@herald/contacts';
import { startTestApi, type TestApi } from '../support/api-harness';
import { atBothWidths, ensureDashboardBuilt, launchBrowser, newContext, screenshot, seriousViolations, sidewaysScrolling } from '../support/browser';
import { signInThroughForm, verifiedUser } from '../support/dashboard-browser';

const OWNER = { email: 'hedy@people.test', password: 'hedy password 12' };

/**
 * The Contacts page in a real Chromium: the list with its search and segment filter, a contact's
 * segments and topics, and a CSV import (written in the background: the window shows its
 * progress, then the report of rejected rows), at 1280 and 390 px with no serious axe violation.
 */
describe('dashboard contacts page (browser)', () => {
  let api: TestApi;
  let browser: Browser;
  let teamId: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    api = await startTestApi();
    browser = await launchBrowser();
    const userId = await verifiedUser(api, OWNER.email, OWNER.password, 'Hedy');
    const db = api.app.get(DataSource);
    teamId = (await db.query(`SELECT team_id FROM team_members WHERE user_id = $1 LIMIT 1`, [userId]))[0].team_id;
    const segments = api.app.get(SegmentsService);
    const topics = api.app.get(TopicsService);
    const contacts = api.app.get(ContactsService);
    const vip = await segments.create(teamId, { name: 'VIP customers' });
    await segments.create(teamId, { name: 'Newsletter' });
    const news = await topics.create(teamId, { name: 'Product news', default_subscription: 'opt_in' });
    await topics.create(teamId, { name: 'Offers', default_subscription: 'opt_out' });
    for (const [email, first, last] of [
      ['ada.lovelace@example.com', 'Ada', 'Lovelace'],
      ['grace.hopper@example.com', 'Grace', 'Hopper'],
      ['alan.turing@example.org', 'Alan', 'Turing'],
    ]) {
      await contacts.create(teamId, {
        email,
        first_name: first,
        last_name: last,
        segments: first === 'Ada' ? [{ id: vip.id }] : [],
        topics: first === 'Ada' ? [{ id: news.id, subscription: 'opt_out' }] : [],
      });
    }
    await contacts.create(teamId, { email: 'left@example.net', unsubscribed: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  const openContacts = async (page: Page) => {
    await signInThroughForm(page, OWNER.email, OWNER.password);
    await page.goto(`/dashboard/t/${teamId}/contacts`);
    await page.getByText('grace.hopper@example.com').filter({ visible: true }).first().waitFor();
  };

  it('lists the contacts at both widths with nothing scrolling sideways', async () => {
    const violations = await atBothWidths(browser, api.url, 'contacts', async (page) => {
      await openContacts(page);
      expect(await sidewaysScrolling(page)).toEqual([]);
    });
    expect(violations).toEqual({ desktop: [], phone: [] });
  });

  it('searches, filters by segment and shows a contact’s segments and topics', async () => {
    const context = await newContext(browser, 'desktop', api.url);
    const page = await context.newPage();
    await openContacts(page);
    await page.getByLabel('Search').fill('example.org');
    await page.getByText('alan.turing@example.org').filter({ visible: true }).first().waitFor();
    await page.getByText('grace.hopper@example.com').filter({ visible: true }).first().waitFor({ state: 'detached' });
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Segment').selectOption({ label: 'VIP customers' });
    await page.getByText('grace.hopper@example.com').filter({ visible: true }).first().waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Details of ada.lovelace@example.com' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('VIP customers').waitFor();
    await dialog.getByText('Product news').waitFor();
    await expect(dialog.getByText('opted out').count()).resolves.toBe(2);
    // Past the modal's opening transition, so the screenshot and axe see it as it stays.
    await page.waitForTimeout(400);
    await screenshot(page, 'contacts-detail', 'desktop');
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByLabel('Search').fill('zzz-nobody');
    await page.getByText('No contact matches').waitFor();
    await context.close();
  });

  it('imports a CSV with the keyboard, shows its progress while it is queued, then the report of rejected rows, at 390 px', async () => {
    // Held until the page shows the queued import; then the api's runner writes it.
    const runner = api.app.get(ContactImportRunner);
    await runner.stop();
    const context = await newContext(browser, 'phone', api.url);
    const page = await context.newPage();
    await openContacts(page);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const csv = [
      'email,first_name,last_name',
      'new.one@example.com,New,One',
      'not-an-address,Bad,Row',
      'grace.hopper@example.com,Grace,Brewster',
    ].join('\n');
    await page.locator('input[type=file]').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('Waiting to start').waitFor();
    await page.getByRole('dialog').getByRole('progressbar', { name: 'Rows imported: 0 of 3' }).waitFor({ state: 'attached' }); // at 0 % its bar has no width
    await page.getByText('closing this window does not stop it').waitFor();
    // Behind the window, the page lists it as going on.
    await page.getByRole('region', { name: 'Contact imports' }).getByText('Importing contacts: 0 of 3 rows').waitFor();
    await screenshot(page, 'contacts-import-progress', 'phone');
    expect(await seriousViolations(page)).toEqual([]);
    runner.start();
    await page.getByText('Rows not imported').waitFor({ timeout: 15_000 });
    await page.getByText('Line 3').filter({ visible: true }).first().waitFor();
    await expect(page.getByText(/not an email address/).count()).resolves.toBeGreaterThan(0);
    await page.waitForTimeout(400);
    await screenshot(page, 'contacts-import-report', 'phone');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await sidewaysScrolling(page)).toEqual([]);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByText('new.one@example.com').filter({ visible: true }).first().waitFor();
    // The page keeps the last import, and its report opens again from there.
    const imports = page.getByRole('region', { name: 'Contact imports' });
    await imports.getByText(/Last import, .*: 1 created, 1 updated, 1 not imported/).waitFor();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await screenshot(page, 'contacts-last-import', 'phone');
    await imports.getByRole('button', { name: 'Report' }).click();
    await page.getByText('Rows not imported').waitFor();
    await page.getByText('Line 3').filter({ visible: true }).first().waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    await context.close();
  });
});
