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
