import { crc32, deflateSync } from 'node:zlib';
import { DomainsRepository } from '@herald/domains';
import { eventually } from '@herald/testing';
import { renderEmailDocument } from '@herald/email-documents';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Resend } from 'resend';
import { TestAudience } from '../broadcasts/audience';
import { markVerified } from '../support/api-harness';
import {
  ensureDashboardBuilt,
  launchBrowser,
  newContext,
  screenshot,
  seriousViolations,
  sidewaysScrolling,
  type AxeViolation,
  type ViewportName,
} from '../support/browser';
import { signInThroughForm, verifiedUser } from '../support/dashboard-browser';
import type { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld } from '../support/dashboard-world';

const OWNER = { email: 'ada@people.test', password: 'ada password 12' };
const DOMAIN = 'ada-news.test';
const SHOP = 'https://shop.example/sale?from=news&utm=spring';

/** A solid-colour PNG of that size (a real image for the upload, made here rather than kept as a fixture). */
function png(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat())]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * The Broadcasts page in a real Chromium against Herald's api, worker and smtp roles: a broadcast
 * composed in the no-code editor (a heading and text typed, a merge-tag chip, a button, an uploaded
 * image, a footer), autosaved as a draft, previewed at desktop and phone width as the server
 * renders it, a test sent that arrives at a sink with the same content in its HTML and text parts,
 * then sent to a segment, each contact with their own merge values. Nothing is fetched from
 * anywhere but Herald; screenshots at 1280 and 390 px; no serious axe violation.
 */
describe('broadcast editor (browser)', () => {
  let world: DashboardWorld;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let teamId: string;
  let api: DashboardClient;
  let broadcastId: string;
  const image = png(120, 60, [200, 30, 60]);
  const problems: string[] = [];
  const offsite: string[] = [];
  const violations: Record<string, AxeViolation[]> = {};
  const t = (path: string) => `/dashboard/api/teams/${teamId}${path}`;

  beforeAll(async () => {
    ensureDashboardBuilt();
    world = await DashboardWorld.start();
    browser = await launchBrowser();
    await verifiedUser(world.delivery.api, OWNER.email, OWNER.password, 'Ada');
    context = await newContext(browser, 'desktop', world.url);
    page = await context.newPage();
    watch(page, 'desktop');
    teamId = await signInThroughForm(page, OWNER.email, OWNER.password);
    api = await world.client();
    await api.auth('/sign-in/email', OWNER);
    const domain = await api.post(t('/domains'), { name: DOMAIN });
    await markVerified(world.delivery.api.app.get(DomainsRepository), domain.body.id);
    // The audience, made through the contacts context (its own suites drive the Contacts API).
    const audience = new TestAudience(new Resend(await world.delivery.api.key(teamId), { baseUrl: world.url }));
    const segment = await audience.segment('Spring customers');
    await audience.property('plan', 'free');
    await audience.topic('Product news');
    await audience.contact({ email: 'ann@people.test', first_name: 'Ann', segments: [{ id: segment }] });
    await audience.contact({ email: 'bo@people.test', segments: [{ id: segment }] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  function watch(target: Page, viewport: ViewportName): void {
    target.on('pageerror', (error) => problems.push(`${viewport} pageerror: ${error.message}`));
    target.on('response', (response) => {
      if (response.url().includes('/dashboard/api/') && response.status() >= 400) problems.push(`${viewport} ${response.status()} ${response.url()}`);
    });
    target.on('request', (request) => {
      if (!request.url().startsWith(world.url) && !/^(data|blob|about):/.test(request.url())) offsite.push(request.url());
    });
  }

  async function check(target: Page, name: string, viewport: ViewportName): Promise<void> {
    await screenshot(target, name, viewport);
    violations[`${name}-${viewport}`] = await seriousViolations(target);
    expect(await sidewaysScrolling(target)).toEqual([]);
  }

  const saved = () => page.locator('[data-save-status="saved"]').waitFor({ timeout: 15_000 });

  it('shows an empty list that says what to do, at both widths', async () => {
    await page.goto(`/dashboard/t/${teamId}/broadcasts`);
    await page.getByText('No broadcasts yet').waitFor();
    await check(page, 'broadcasts-empty', 'desktop');
    const phone = await newContext(browser, 'phone', world.url, context);
    const small = await phone.newPage();
    watch(small, 'phone');
    await small.goto(`/dashboard/t/${teamId}/broadcasts`);
    await small.getByText('No broadcasts yet').waitFor();
    await check(small, 'broadcasts-empty', 'phone');
    await phone.close();
  }, 60_000);

  it('composes a broadcast in the editor, autosaving the draft', async () => {
    await page.getByRole('link', { name: 'New broadcast' }).first().click();
    await page.waitForURL(/\/broadcasts\/new$/);
    await page.getByLabel(/^From/).fill(`Ada News <news@${DOMAIN}>`);
    await page.getByLabel(/^Subject/).fill('Spring news for {{{contact.first_name|friend}}}');
    await page.getByLabel(/^Preview text/).fill('Everything is 20% off this week');
    await page.getByText('Not saved yet: fill in From, Subject and Segment.').waitFor();
    await page.getByRole('combobox', { name: /^Segment/ }).click();
    await page.getByRole('option', { name: 'Spring customers' }).click();
    // The first save creates the draft, and the page moves to its address.
    await page.waitForURL(/\/broadcasts\/[0-9a-f-]{36}$/, { timeout: 15_000 });
    broadcastId = page.url().split('/').pop()!;
    await saved();

    const canvas = page.locator('.herald-editor-canvas .tiptap');
    await canvas.locator('h1').click();
    await page.keyboard.type('Spring sale');
    await canvas.locator('p').first().click();
    await page.keyboard.type('Hello ');
    await page.getByRole('button', { name: 'Merge tag' }).click();
    await page.getByRole('menuitem', { name: /First name/ }).click();
    await page.keyboard.type(', everything is 20% off <this> week & next.');
    await canvas.locator('.herald-merge-tag').waitFor();

    await page.getByRole('button', { name: 'Button', exact: true }).click();
    const buttonForm = page.getByRole('form', { name: 'Add a button' });
    await buttonForm.getByLabel(/^Button text/).fill('Shop now');
    await buttonForm.getByLabel(/^Link/).fill(SHOP);
    await buttonForm.getByRole('button', { name: 'Add button' }).click();
    await canvas.locator('.node-button', { hasText: 'Shop now' }).waitFor();

    await page.getByRole('button', { name: 'Image', exact: true }).click();
    const imageForm = page.getByRole('form', { name: 'Add an image' });
    await imageForm.locator('input[type=file]').setInputFiles({ name: 'tulip.png', mimeType: 'image/png', buffer: image });
    await imageForm.getByLabel(/^Alternative text/).fill('A red tulip');
    await imageForm.getByRole('button', { name: 'Upload and add' }).click();
    await canvas.locator('img[alt="A red tulip"]').waitFor();

    await page.getByRole('button', { name: 'Footer', exact: true }).click();
    await canvas.locator('.herald-footer').waitFor();

    // Autosaved without a click: the editor's document, the blocks in order, the chip a mergeTag node.
    const blocksOf = (document: unknown): string[] => {
      const types: string[] = [];
      const walk = (node: { type: string; content?: unknown[] }) => {
        types.push(node.type);
        for (const child of node.content ?? []) walk(child as typeof node);
      };
      walk(document as { type: string });
      return types.filter((type) => ['heading', 'mergeTag', 'button', 'image', 'footer'].includes(type));
    };
    let stored: any;
    await eventually(async () => {
      stored = (await api.get(t(`/broadcasts/${broadcastId}`))).body;
      expect(blocksOf(stored.document)).toEqual(['heading', 'mergeTag', 'button', 'image', 'footer']);
    }, 10_000);
    await saved();
    expect(stored.status).toBe('draft');
    const { html } = renderEmailDocument(stored.document);
    expect(html).toContain('Hello {{{contact.first_name|there}}}, everything is 20% off &lt;this&gt; week &amp; next.');
    expect(html).toMatch(/<img src="http:\/\/127\.0\.0\.1:\d+\/images\/[0-9a-f-]{36}" alt="A red tulip"/);
    await check(page, 'broadcast-compose', 'desktop');
  }, 90_000);

  it('previews what the server renders, at desktop and phone width and as plain text', async () => {
    const stored = (await api.get(t(`/broadcasts/${broadcastId}`))).body;
    // What the server renders of the saved document (the broadcasts API's preview, the code that sends it).
    const rendered = await api.post(t('/broadcasts/preview'), { document: stored.document });
    expect(rendered.status).toBe(200);
    const server: { html: string; text: string } = rendered.body;
    await page.getByRole('button', { name: 'Preview' }).click();
    const dialog = page.getByRole('dialog', { name: 'Preview' });
    const desktop = dialog.locator('iframe[data-preview="desktop"]');
    await desktop.waitFor();
    // The preview is byte for byte the HTML the broadcast sends (the same renderer, run in the browser).
    expect(await desktop.getAttribute('srcdoc')).toBe(server.html);
    const frame = page.frameLocator('iframe[data-preview="desktop"]');
    await frame.getByRole('heading', { name: 'Spring sale' }).waitFor();
    expect(await frame.getByRole('link', { name: 'Shop now' }).getAttribute('href')).toBe(SHOP);
    expect(await frame.locator('img[alt="A red tulip"]').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(120);
    expect(await desktop.evaluate((element) => (element as unknown as { clientWidth: number }).clientWidth)).toBeGreaterThan(600);
    await screenshot(page, 'broadcast-preview', 'desktop');

    await dialog.getByText('Mobile', { exact: true }).click();
    const mobile = dialog.locator('iframe[data-preview="mobile"]');
    await mobile.waitFor();
    expect(await mobile.evaluate((element) => (element as unknown as { clientWidth: number }).clientWidth)).toBeLessThanOrEqual(390);
    await page.frameLocator('iframe[data-preview="mobile"]').getByRole('heading', { name: 'Spring sale' }).waitFor();
    await screenshot(page, 'broadcast-preview-mobile', 'desktop');

    await dialog.getByText('Plain text', { exact: true }).click();
    expect(await dialog.locator('[data-preview="text"]').textContent()).toBe(server.text);
    // axe cannot run inside the preview's sandbox (no scripts) and would wait for it: it checks the dialog on its text view.
    await check(page, 'broadcast-preview-text', 'desktop');
    expect(server.text).toContain(`Shop now: ${SHOP}`);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  }, 60_000);

  it('sends a test that arrives with the same content in its HTML and text parts, and its image can be fetched', async () => {
    await page.getByRole('button', { name: 'Send test' }).click();
    const form = page.getByRole('form', { name: 'Send a test' });
    await form.getByLabel(/^Send a test to/).fill('tester@people.test');
    await form.getByRole('button', { name: 'Send test' }).click();
    await form.getByText('Test sent to tester@people.test.').waitFor({ timeout: 15_000 });

    const mail = await world.mailTo('tester@people.test', /Spring news/, 30_000);
    expect(mail.subject).toBe('Spring news for friend');
    // The merge tags filled with their fallbacks, everywhere; the typed brackets escaped in the HTML only.
    expect(mail.html).toContain('<h1 style="margin:0 0 16px;font-size:28px;line-height:36px;font-weight:700">Spring sale</h1>');
    expect(mail.html).toContain('Hello there, everything is 20% off &lt;this&gt; week &amp; next.');
    expect(mail.text).toContain('Spring sale\n\nHello there, everything is 20% off <this> week & next.');
    expect(mail.html).toContain(`href="${SHOP.replace(/&/g, '&amp;')}"`);
    expect(mail.text).toContain(`Shop now: ${SHOP}`);
    expect(mail.text).toContain('A red tulip');
    expect(mail.text).toMatch(/You receive this email because you subscribed to our updates\.\nUnsubscribe: http/);
    expect(mail.html).not.toContain('{{{');
    expect(mail.text).not.toContain('{{{');
    // The image a mail client would load: served by Herald without a session.
    const src = /<img src="([^"]+)" alt="A red tulip"/.exec(mail.html)![1]!;
    const fetched = await fetch(src);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await fetched.arrayBuffer()).equals(image)).toBe(true);
    await page.keyboard.press('Escape');
  }, 60_000);

  it('is usable at phone width', async () => {
    const phone = await newContext(browser, 'phone', world.url, context);
    const small = await phone.newPage();
    watch(small, 'phone');
    await small.goto(`/dashboard/t/${teamId}/broadcasts/${broadcastId}`);
    await small.locator('.herald-editor-canvas .tiptap h1', { hasText: 'Spring sale' }).waitFor();
    await check(small, 'broadcast-compose', 'phone');
    await small.getByRole('button', { name: 'Preview' }).click();
    await small.getByRole('dialog', { name: 'Preview' }).getByText('Mobile', { exact: true }).click();
    await small.frameLocator('iframe[data-preview="mobile"]').getByRole('heading', { name: 'Spring sale' }).waitFor();
    await screenshot(small, 'broadcast-preview', 'phone');
    expect(await sidewaysScrolling(small)).toEqual([]);
    await small.getByRole('dialog', { name: 'Preview' }).getByText('Plain text', { exact: true }).click();
    await check(small, 'broadcast-preview-text', 'phone');
    await phone.close();
  }, 60_000);

  it('sends it to the segment: each contact gets their own merge values, and the list shows it sent', async () => {
    await page.getByRole('button', { name: 'Send now' }).click();
    const confirm = page.getByRole('dialog', { name: 'Send this broadcast now?' });
    await confirm.getByRole('button', { name: 'Send now' }).click();
    await page.waitForURL(/\/broadcasts$/, { timeout: 15_000 });
    await eventually(async () => {
      const sent = (await api.get(t(`/broadcasts/${broadcastId}`))).body;
      expect(sent.status).toBe('sent');
    }, 30_000);
    const ann = await world.mailTo('ann@people.test', /Spring news/, 30_000);
    const bo = await world.mailTo('bo@people.test', /Spring news/, 30_000);
    expect(ann.subject).toBe('Spring news for Ann');
    expect(ann.text).toContain('Hello Ann, everything is 20% off');
    expect(bo.subject).toBe('Spring news for friend');
    expect(bo.text).toContain('Hello there, everything is 20% off');
    const row = page.locator('table tbody tr', { hasText: 'Spring news' });
    await row.waitFor();
    await page.reload();
    await row.getByText(/2 recipients/).waitFor({ timeout: 20_000 });
    // The list names the merge tag's field, not its syntax.
    expect(await row.getByRole('link').innerText()).toBe('Spring news for ‹first name›');
    await check(page, 'broadcasts-list', 'desktop');
  }, 90_000);

  it('schedules a draft, and cancels it', async () => {
    await page.getByRole('link', { name: 'New broadcast' }).first().click();
    await page.getByLabel(/^From/).fill(`Ada News <news@${DOMAIN}>`);
    await page.getByLabel(/^Subject/).fill('Summer preview');
    await page.getByRole('combobox', { name: /^Segment/ }).click();
    await page.getByRole('option', { name: 'Spring customers' }).click();
    await page.waitForURL(/\/broadcasts\/[0-9a-f-]{36}$/, { timeout: 15_000 });
    const id = page.url().split('/').pop()!;
    await page.locator('.herald-editor-canvas .tiptap h1').click();
    await page.keyboard.type('Summer is coming');
    await eventually(async () => expect(JSON.stringify((await api.get(t(`/broadcasts/${id}`))).body.document)).toContain('Summer is coming'), 10_000);

    const at = new Date(Date.now() + 2 * 86_400_000);
    const local = `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, '0')}-${String(at.getDate()).padStart(2, '0')}T10:30`;
    await page.getByRole('button', { name: 'Schedule' }).click();
    const form = page.getByRole('form', { name: 'Schedule the broadcast' });
    await form.getByLabel(/^Send at/).fill(local);
    await form.getByRole('button', { name: 'Schedule' }).click();
    await page.waitForURL(/\/broadcasts$/, { timeout: 15_000 });
    const row = page.locator('table tbody tr', { hasText: 'Summer preview' });
    await row.getByText('scheduled').waitFor();
    const scheduled = (await api.get(t(`/broadcasts/${id}`))).body;
    expect(scheduled.status).toBe('scheduled');
    expect(new Date(scheduled.scheduled_at).getTime()).toBe(new Date(local).getTime());

    await row.getByRole('link', { name: 'Summer preview' }).click();
    await page.getByRole('button', { name: 'Cancel schedule' }).click();
    await page.getByRole('dialog', { name: 'Cancel this broadcast?' }).getByRole('button', { name: 'Cancel broadcast' }).click();
    await page.getByText('cancelled', { exact: true }).waitFor();
    expect((await api.get(t(`/broadcasts/${id}`))).body.status).toBe('cancelled');
  }, 60_000);

  it('loaded nothing from outside Herald, met no error, and axe found nothing serious', () => {
    expect(offsite).toEqual([]);
    expect(problems).toEqual([]);
    expect(violations).toEqual(Object.fromEntries(Object.keys(violations).map((name) => [name, []])));
  });
});
