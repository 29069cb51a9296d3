import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { Client } from 'pg';
import type { HeraldConfig } from '@herald/config';
import { DashboardAuth } from '@herald/people';

/**
 * A dashboard user whose address counts as verified, made on the server side the way `herald all`
 * makes its development user (better-auth's sign-up, then the verified flag). For browser suites
 * that are not about verification; the sign-up suite verifies through a delivered email instead.
 */
export async function verifiedUser(
  api: { app: { get(token: typeof DashboardAuth): DashboardAuth }; config: HeraldConfig },
  email: string,
  password: string,
  name = email.split('@')[0]!,
): Promise<string> {
  const userId = await api.app.get(DashboardAuth).signUp(email, password, name);
  const config = api.config;
  const db = new Client({ connectionString: config.DATABASE_URL });
  await db.connect();
  try {
    await db.query(`UPDATE "${config.DATABASE_SCHEMA}".users SET email_verified = true WHERE id = $1`, [userId]);
  } finally {
    await db.end();
  }
  return userId;
}

/** Signs in through the SPA's form and waits for the signed-in shell (its team's Domains page). */
export async function signInThroughForm(page: Page, email: string, password: string): Promise<string> {
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(/\/dashboard\/t\/[0-9a-f-]{36}\/domains/);
  return /\/t\/([0-9a-f-]{36})\//.exec(page.url())![1]!;
}

/** Polls `check` every 50 ms until it holds; fails with `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The DNS records a domain's page shows (its desktop table): type, name, value and MX priority, as a person would copy them. */
export async function shownRecords(page: Page): Promise<{ type: string; name: string; value: string; priority?: number }[]> {
  const rows = page.locator('table tbody tr');
  await rows.first().waitFor();
  const records: { type: string; name: string; value: string; priority?: number }[] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const cells = rows.nth(i).locator('td');
    const typeCell = await cells.nth(1).innerText();
    const priority = /priority (\d+)/.exec(typeCell)?.[1];
    records.push({
      type: typeCell.trim().split(/\s+/)[0]!,
      name: (await cells.nth(2).innerText()).trim(),
      value: (await cells.nth(3).innerText()).trim(),
      ...(priority ? { priority: Number(priority) } : {}),
    });
  }
  return records;
}

/**
 * A local HTTP server standing in for the outside world: `/hook` answers a webhook delivery with
 * 200, anything else (a remote image, a stylesheet) is counted in `remoteHits` and answered 404.
 */
export async function startOutsideWorld(): Promise<{ url: string; remoteHits: string[]; hooks: number; close(): Promise<void> }> {
  const state = { remoteHits: [] as string[], hooks: 0 };
  const server = createServer((request, response) => {
    request.resume();
    if (request.method === 'POST' && request.url === '/hook') {
      state.hooks++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('received');
      return;
    }
    state.remoteHits.push(`${request.method} ${request.url}`);
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    remoteHits: state.remoteHits,
    get hooks() {
      return state.hooks;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
