import type { Browser } from 'playwright-core';
import { donePage, invalidLinkPage, preferencePage } from '@herald/broadcasts';
import { atBothWidths, launchBrowser, sidewaysScrolling } from '../support/browser';

jest.setTimeout(60_000);

const VIEW = {
  teamName: 'Acme & Co',
  email: 'a.very.long.address.of.a.reader@subdomain.example-inbox.test',
  unsubscribed: false,
  topics: [
    { id: 't1', name: 'Product news', description: 'New features, once a month.', subscribed: true },
    { id: 't2', name: 'Events', description: null, subscribed: false },
  ],
  action: '/unsubscribe/token',
};

/**
 * The hosted unsubscribe pages as the api role renders them (no asset from anywhere): readable at
 * 390 px and on a desktop, no serious axe finding, and the form usable with the keyboard alone.
 */
describe('the hosted unsubscribe pages', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const pages: [string, string][] = [
    ['unsubscribe-preferences', preferencePage({ ...VIEW, notice: 'Your preferences are saved.' })],
    ['unsubscribe-done', donePage('Acme & Co', 'You will no longer get “Product news” emails.')],
    ['unsubscribe-invalid', invalidLinkPage()],
  ];

  it.each(pages)('%s: no serious axe finding and no sideways scrolling at either width', async (name, html) => {
    const requests: string[] = [];
    const found = await atBothWidths(browser, 'http://127.0.0.1', name, async (page) => {
      page.on('request', (r) => !r.url().startsWith('data:') && !r.url().startsWith('about:') && requests.push(r.url()));
      await page.setContent(html);
      expect(await sidewaysScrolling(page)).toEqual([]);
    });
    expect(found).toEqual({ desktop: [], phone: [] });
    expect(requests).toEqual([]);
  });

  it('works with the keyboard: a topic unchecked with Space, the form submitted with Enter', async () => {
    const page = await browser.newPage();
    let posted = '';
    await page.route('http://herald.test/unsubscribe/token', async (route) => {
      posted = route.request().postData() ?? '';
      await route.fulfill({ status: 200, contentType: 'text/html', body: 'ok' });
    });
    await page.goto('about:blank');
    await page.setContent(preferencePage({ ...VIEW, action: 'http://herald.test/unsubscribe/token' }));
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('t-t1');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Save preferences');
    await Promise.all([page.waitForURL('http://herald.test/unsubscribe/token'), page.keyboard.press('Enter')]);
    expect(new URLSearchParams(posted).getAll('topic')).toEqual([]);
    expect(new URLSearchParams(posted).get('action')).toBe('save');
    await page.close();
  });
});
