import { ApiKeysService } from '@herald/accounts';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { TestDnsServer } from '@herald/testing';
import type { Browser, Page } from 'playwright-core';
import { Resend } from 'resend';
import { markVerified, startTestApi, type TestApi } from '../support/api-harness';
import { atBothWidths, ensureDashboardBuilt, launchBrowser, newContext } from '../support/browser';
import { signInThroughForm, verifiedUser } from '../support/dashboard-browser';

const OWNER = { email: 'rosa@people.test', password: 'rosa password 1' };
const TEXT = 'Hello Jane, here is what happened on your Acme account this week: three new projects and two comments.';

/**
 * The Insights panel of the Emails detail in a real Chromium: an email with findings shows each
 * with its severity, what was found and how to fix it; a clean email says "No issues found". Both
 * pages are axe-clean and screenshotted at 1280 and 390 px.
 */
describe('email insights panel (browser)', () => {
  let api: TestApi;
  let dns: TestDnsServer;
  let browser: Browser;
  let teamId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ensureDashboardBuilt();
    dns = await TestDnsServer.start();
    api = await startTestApi({ DNS_SERVERS: dns.address(), DNS_TIMEOUT_MS: '500' });
    browser = await launchBrowser();
    await verifiedUser(api, OWNER.email, OWNER.password, 'Rosa');
    const context = await newContext(browser, 'desktop', api.url);
    teamId = await signInThroughForm(await context.newPage(), OWNER.email, OWNER.password);
    await context.close();
    const domain = await api.app.get(DomainsService).create({ teamId, homeRegion: 'us-east-1' }, { name: 'mail.rosa.test' });
    await markVerified(api.app.get(DomainsRepository), domain.id);
    dns.set('_dmarc.rosa.test', 'TXT', ['v=DMARC1; p=reject']);
    const { token } = await api.app.get(ApiKeysService).create(teamId, { name: 'browser', permission: 'full_access' });
    const resend = new Resend(token, { baseUrl: api.url });
    const send = async (email: Record<string, unknown>) => {
      const { data, error } = await resend.emails.send({ from: 'Rosa <hello@mail.rosa.test>', to: 'jane@example.org', ...email } as never);
      expect(error).toBeNull();
      return data!.id;
    };
    ids.clean = await send({ subject: 'Your week at Rosa', html: `<p>${TEXT}</p><a href="https://rosa.test/account">Account</a>`, text: TEXT });
    ids.flawed = await send({
      from: 'Rosa <no-reply@mail.rosa.test>',
      to: 'postmaster@gmial.com',
      subject: 'Spring sale',
      html: `<p>${TEXT}</p><a href="https://bit.ly/3xYz">Shop now</a> <img src="https://rosa.test/sale.png"> <a href="https://rosa.test/unsubscribe">Unsubscribe</a>`,
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await dns?.close();
  });

  const openEmail = (id: string, ready: string) => async (page: Page) => {
    page.setDefaultTimeout(15_000);
    await signInThroughForm(page, OWNER.email, OWNER.password);
    await page.goto(`/dashboard/t/${teamId}/emails/${id}`);
    await page.getByRole('region', { name: 'Insights' }).getByText(ready).first().waitFor();
    // axe cannot run inside the HTML preview's sandbox (no scripts) and would wait for it: the text tab instead.
    await page.getByRole('tab', { name: 'Text' }).click();
  };

  it('lists each finding with its severity, what was found and how to fix it, at 1280 and 390 px, axe-clean', async () => {
    const violations = await atBothWidths(browser, api.url, 'email-insights', async (page) => {
      await openEmail(ids.flawed, 'How to fix:')(page);
      const panel = page.getByRole('region', { name: 'Insights' });
      const items = panel.getByRole('list', { name: 'Insights found' }).getByRole('listitem');
      const shown = await Promise.all((await items.all()).map((item) => item.getAttribute('data-insight')));
      expect(shown).toEqual([
        'no-reply-sender',
        'url-shortener-link',
        'plain-text-missing',
        'list-unsubscribe-missing',
        'recipient-domain-typo',
        'image-missing-alt',
        'role-recipient',
      ]);
      const typo = await panel.locator('[data-insight="recipient-domain-typo"]').innerText();
      expect(typo).toMatch(/^Needs attention/);
      expect(typo).toContain('postmaster@gmial.com (did you mean gmail.com?)');
      expect(typo).toContain('How to fix: Correct the address');
      expect(await panel.locator('[data-insight="role-recipient"]').innerText()).toMatch(/^Improvement/);
      // Nothing overflows the phone's width.
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    });
    expect(violations).toEqual({ desktop: [], phone: [] });
  }, 90_000);

  it('says "No issues found" for a clean email, at 1280 and 390 px, axe-clean', async () => {
    const violations = await atBothWidths(browser, api.url, 'email-insights-clean', async (page) => {
      await openEmail(ids.clean, 'No issues found')(page);
      expect(await page.getByRole('region', { name: 'Insights' }).getByRole('listitem').count()).toBe(0);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    });
    expect(violations).toEqual({ desktop: [], phone: [] });
  }, 90_000);
});
