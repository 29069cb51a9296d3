import type { INestApplicationContext } from '@nestjs/common';
import { Client } from 'pg';
import type { Browser, Page } from 'playwright-core';
import { DomainsRepository } from '@herald/domains';
import { SystemMailer } from '@herald/people';
import { eventually } from '@herald/testing';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { markVerified, startTestApi, type TestApi } from '../support/api-harness';
import {
  animationsDone,
  ensureDashboardBuilt,
  launchBrowser,
  newContext,
  screenshot,
  seriousViolations,
  type AxeViolation,
} from '../support/browser';
import { shownRecords, signInThroughForm, until, verifiedUser } from '../support/dashboard-browser';
import { DashboardClient } from '../support/dashboard-client';
import type { ReceivedDelivery } from '../webhooks/webhook-receiver';
import { WebhookReceiver } from '../webhooks/webhook-receiver';
import { verifiesWith } from '../webhooks/webhooks-world';

const OWNER = { email: 'ada@people.test', password: 'ada password 12' };

/**
 * The dashboard's actions that change things, in a real Chromium against Herald's api and webhooks
 * roles and a local webhook receiver: the signing secret rotated on the webhook page (checked on
 * the next deliveries with the `standardwebhooks` verifier), a delivery replayed from the log,
 * the DKIM key rotated on the domain page, the domain deleted through its confirmation dialog,
 * the team switcher taking a person in two teams to the other team's data, and another device's
 * session revoked on the Account page. axe checks the confirmation dialog while it is open.
 */
describe('dashboard actions (browser)', () => {
  let api: TestApi;
  let db: Client;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;
  let client: DashboardClient;
  let teamId: string;
  const t = (path: string) => `/dashboard/api/teams/${teamId}${path}`;
  const ids: Record<string, string> = {};
  const opened: Record<string, AxeViolation[]> = {};
  /** Dashboard API answers of 400 and up (but those a step expects), and uncaught page errors. */
  const problems: string[] = [];
  const expected: RegExp[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    // The dashboard's own mail (the sign-up's verification link) is accepted, as on a verified MAIL_DOMAIN.
    await markVerified(api.app.get(DomainsRepository), (await api.app.get(SystemMailer).systemSender()).domainId);
    db = new Client({ connectionString: api.config.DATABASE_URL });
    await db.connect();
    receiver = await WebhookReceiver.start();
    webhooks = await startWebhooks(api.config, {}, { pollIntervalMs: 25, attemptTimeoutMs: 3_000 });
    browser = await launchBrowser();
    await verifiedUser(api, OWNER.email, OWNER.password, 'Ada');
    page = await (await newContext(browser, 'desktop', api.url)).newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('response', (response) => {
      const url = response.url();
      if (url.includes('/dashboard/api/') && response.status() >= 400 && !expected.some((e) => e.test(url)))
        problems.push(`${response.status()} ${url}`);
    });
    teamId = await signInThroughForm(page, OWNER.email, OWNER.password);
    client = await new DashboardClient(api.url).start();
    await client.auth('/sign-in/email', OWNER);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await webhooks?.close();
    await receiver?.close();
    await db?.end();
    await api?.close();
  });

  /** Adds a domain through the API (its domain.created event goes to the webhook) and answers that event's delivery. */
  async function domainWithDelivery(name: string): Promise<ReceivedDelivery> {
    const created = await client.post(t('/domains'), { name });
    expect(created.status).toBe(201);
    ids[name] = created.body.id;
    const ofDomain = () => receiver.at('/hook').filter((d) => d.json.data.name === name);
    await until(async () => ofDomain().length === 1, `the delivery of ${name}'s domain.created`);
    return ofDomain()[0]!;
  }

  const secretPanel = () => page.locator('.mantine-Paper-root').filter({ hasText: 'Signing secret' });
  const shownSecret = async () =>
    (
      (await secretPanel()
        .getByText(/^whsec_/)
        .textContent()) ?? ''
    ).trim();

  it('rotates the signing secret on the webhook page: the next delivery verifies with the new secret, and with the old one only for the overlap', async () => {
    ids.webhook = (await client.post(t('/webhooks'), { endpoint: receiver.url('/hook'), events: ['domain.created'] })).body.id;
    await page.goto(`/dashboard/t/${teamId}/webhooks/${ids.webhook}`);
    await secretPanel().getByRole('button', { name: 'Reveal secret' }).click();
    const old = await shownSecret();
    expect(old).toMatch(/^whsec_/);
    const first = await domainWithDelivery('first.test');
    expect(verifiesWith(first, old).standardwebhooks).toBe(true);

    await secretPanel().getByRole('button', { name: 'Rotate secret' }).click();
    await eventually(async () => expect(await shownSecret()).not.toBe(old), 10_000);
    const fresh = await shownSecret();
    expect(fresh).toMatch(/^whsec_/);
    expect((await client.get(t(`/webhooks/${ids.webhook}/secret`))).body.secret).toBe(fresh);
    const second = await domainWithDelivery('second.test');
    expect(verifiesWith(second, fresh).standardwebhooks).toBe(true);
    // Signed with both for a day (README: receivers switch over without losing an event)...
    expect(verifiesWith(second, old).standardwebhooks).toBe(true);
    // ...and with the new one alone once that day is over (the old secret's expiry moved to the past).
    await db.query(`UPDATE "${api.config.DATABASE_SCHEMA}".webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [
      ids.webhook,
    ]);
    const third = await domainWithDelivery('third.test');
    expect(verifiesWith(third, fresh).standardwebhooks).toBe(true);
    expect(verifiesWith(third, old).standardwebhooks).toBe(false);
    expect(problems).toEqual([]);
  }, 60_000);

  it('replays a delivery from the log: the receiver gets it again under the same id, and its attempts show both', async () => {
    const [first] = receiver.at('/hook').filter((d) => d.json.data.name === 'first.test');
    const messageId = String(first!.headers['webhook-id']);
    await page.reload();
    const row = page.locator('table tbody tr').filter({ hasText: messageId });
    await row.getByText('success').waitFor({ timeout: 15_000 });
    await row.getByRole('button', { name: 'Replay' }).click();
    const ofMessage = () => receiver.at('/hook').filter((d) => d.headers['webhook-id'] === messageId);
    await until(async () => ofMessage().length === 2, 'the replayed delivery');
    const again = ofMessage()[1]!;
    expect(again.body).toBe(first!.body);
    expect(verifiesWith(again, (await client.get(t(`/webhooks/${ids.webhook}/secret`))).body.secret).standardwebhooks).toBe(true);
    await row.getByRole('button', { name: 'Attempts' }).click();
    // (The phone width's cards are in the page too, hidden: only what is shown counts.)
    const shown = page.getByText('HTTP 200', { exact: true }).filter({ visible: true });
    await eventually(async () => expect(await shown.count()).toBe(2), 15_000);
    expect(problems).toEqual([]);
  }, 60_000);

  it('rotates the DKIM key on the domain page, says why a second rotation waits, and deletes the domain through its confirmation', async () => {
    const name = 'third.test';
    await page.goto(`/dashboard/t/${teamId}/domains/${ids[name]}`);
    await page.getByRole('heading', { name }).waitFor({ timeout: 15_000 });
    const dkim = async () => (await shownRecords(page)).filter((r) => r.value.startsWith('v=DKIM1'));
    const [before] = await dkim();
    expect(before).toBeDefined();

    await page.getByRole('button', { name: 'Rotate DKIM key' }).click();
    await eventually(async () => expect(await dkim()).toHaveLength(2), 10_000);
    const added = (await dkim()).find((r) => r.name !== before!.name)!;
    expect(added.value).not.toBe(before!.value);
    const records: { value: string }[] = (await client.get(t(`/domains/${ids[name]}`))).body.records;
    expect(records.map((r) => r.value)).toEqual(expect.arrayContaining([before!.value, added.value]));
    expected.push(/\/dkim\/rotate$/);
    await page.getByRole('button', { name: 'Rotate DKIM key' }).click();
    await page.getByRole('alert').filter({ hasText: 'rotation is already in progress' }).waitFor({ timeout: 10_000 });

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this domain?' });
    await dialog.getByText(`Email can no longer be sent from ${name}`).waitFor({ timeout: 10_000 });
    // Checked once it has faded in: mid-transition its Delete button's colours fail the contrast check.
    await animationsDone(page);
    opened['delete-domain dialog'] = await seriousViolations(page);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    expect((await client.get(t(`/domains/${ids[name]}`))).status).toBe(200);

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    // The page may ask for the domain once more before it moves to the list: a 404 then is the deletion's, not a fault.
    expected.push(new RegExp(`/domains/${ids[name]}$`));
    await dialog.getByRole('button', { name: 'Delete domain' }).click();
    await page.waitForURL(new RegExp(`/t/${teamId}/domains$`), { timeout: 10_000 });
    await page.getByText('first.test').filter({ visible: true }).waitFor({ timeout: 10_000 });
    expect(await page.getByText(name, { exact: true }).count()).toBe(0);
    expect((await client.get(t(`/domains/${ids[name]}`))).status).toBe(404);
    expect(problems).toEqual([]);
  }, 120_000);

  it("switches to the person's other team from the header, and shows that team's data, not the first's", async () => {
    const second = (await client.post('/dashboard/api/teams', { name: 'Ada Labs' })).body;
    expect((await client.post(`/dashboard/api/teams/${second.id}/domains`, { name: 'labs.test' })).status).toBe(201);
    await page.goto(`/dashboard/t/${teamId}/domains`);
    await page.getByText('first.test').filter({ visible: true }).waitFor();
    expect(await page.locator('[data-team-switcher]').innerText()).toMatch(/^Team:\s*Ada's team/);

    await page.locator('[data-team-switcher]').click();
    const teams = page.getByRole('list', { name: 'Your teams' });
    await teams.getByRole('button', { name: /Ada Labs/ }).waitFor();
    expect(await teams.getByRole('button', { name: /Ada's team/ }).getAttribute('aria-current')).toBe('true');
    // The dropdown fades in; axe blends colours with a fading ancestor's opacity, so it runs once the fade is over.
    // (A function, not a string: the dashboard's CSP refuses eval. This project's typings have no DOM.)
    await page.waitForFunction(() => {
      const view = globalThis as unknown as {
        document: { querySelector(s: string): object | null };
        getComputedStyle(e: object): { opacity: string };
      };
      const dropdown = view.document.querySelector('.mantine-Popover-dropdown');
      return dropdown !== null && view.getComputedStyle(dropdown).opacity === '1';
    });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'team-switcher', 'desktop');
    const desktop = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await teams.getByRole('button', { name: /Ada Labs/ }).waitFor();
    // At phone width the side navigation slides away (a CSS transition); the picture waits for it to end.
    await page.waitForTimeout(500);
    await screenshot(page, 'team-switcher', 'phone');
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(desktop);
    await teams.getByRole('button', { name: /Ada Labs/ }).click();
    await page.waitForURL(new RegExp(`/t/${second.id}/domains$`));
    await page.getByText('labs.test').filter({ visible: true }).waitFor();
    expect(await page.getByText('first.test').count()).toBe(0);
    expect(await page.locator('[data-team-switcher]').innerText()).toMatch(/^Team:\s*Ada Labs\s+us-east-1 · owner/);
    // The section is kept: the Webhooks page of the second team has none of the first team's endpoint.
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(new RegExp(`/t/${second.id}/webhooks$`));
    await page.getByText('No webhook endpoints yet').waitFor();
    expect(await page.getByText(receiver.url('/hook')).count()).toBe(0);
    // The dashboard's home opens on the team last worked in, and on the first again once that one is left behind.
    await page.goto('/dashboard/');
    await page.waitForURL(new RegExp(`/t/${second.id}/domains$`));
    await page.getByText('labs.test').filter({ visible: true }).waitFor();
    await page.goto(`/dashboard/t/${teamId}/emails`);
    await page.locator('[data-team-switcher]').filter({ hasText: "Ada's team" }).waitFor();
    await page.goto('/dashboard/');
    await page.waitForURL(new RegExp(`/t/${teamId}/domains$`));
    expect(problems).toEqual([]);
    expect(opened).toEqual({ 'delete-domain dialog': [] });
  }, 60_000);

  it('lists the sessions on the Account page and revokes the other one, which is signed out at once', async () => {
    await page.goto(`/dashboard/t/${teamId}/account`);
    const sessions = page.getByRole('region', { name: 'Sessions' });
    // This browser's session and the API client's (another device signed in as Ada).
    await sessions.getByText('This session').filter({ visible: true }).waitFor({ timeout: 15_000 });
    const rows = sessions.locator('table tbody tr');
    await eventually(async () => expect({ rows: await rows.count(), shown: await sessions.innerText() }).toMatchObject({ rows: 2 }), 10_000);
    const revoke = sessions.getByRole('button', { name: /^Revoke the session of / }).filter({ visible: true });
    expect(await revoke.count()).toBe(1);
    expect((await client.get('/dashboard/api/me')).status).toBe(200);
    await revoke.click();
    await eventually(async () => expect(await rows.count()).toBe(1), 10_000);
    expect((await client.get('/dashboard/api/me')).status).toBe(401);
    expect((await page.request.get('/dashboard/api/me')).status()).toBe(200);
    expect(problems).toEqual([]);
  }, 60_000);
});
