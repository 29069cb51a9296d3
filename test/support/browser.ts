import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = join(__dirname, '..', '..');
export const SCREENSHOTS = join(ROOT, 'test', 'browser', 'screenshots');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Debian's chromium (deploy/local/ensure-test-tools.sh installs it); Playwright's own download is
 * not reachable. `extraArgs` adds switches, e.g. `--host-resolver-rules=MAP *.acme.test 127.0.0.1`.
 */
export function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** A context of that width; `signedInAs` carries another context's cookies over (the same session at the other width). */
export async function newContext(browser: Browser, viewport: ViewportName, baseURL: string, signedInAs?: BrowserContext): Promise<BrowserContext> {
  return browser.newContext({
    viewport: VIEWPORTS[viewport],
    baseURL,
    isMobile: viewport === 'phone',
    hasTouch: viewport === 'phone',
    locale: 'en-GB',
    ...(signedInAs && { storageState: await signedInAs.storageState() }),
  });
}

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Waits until the page's running CSS transitions and animations have ended (a dialog fading in):
 * axe reads colours as they are drawn, so text at half opacity fails its contrast check.
 */
export async function animationsDone(page: Page): Promise<void> {
  // A string: this project's TypeScript has no DOM types. Infinite animations (spinners) are not waited for.
  await page.evaluate(
    `Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => undefined)))`,
  );
}

/** axe-core's serious and critical violations on the page as it is now (an empty list passes). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: String(v.impact), help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

/**
 * What scrolls sideways on the page as it is now: the page itself, or any visible element whose
 * content is wider than its box and that scrolls (a table's scroll container) or cuts it off.
 * Text ellipsis (`truncate`) is not counted here; `truncated` looks at that. The email preview's
 * frame and code blocks are the sender's content and left out.
 */
export function sidewaysScrolling(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(SIDEWAYS);
}

// Run in the page (a string: this project's TypeScript has no DOM types).
const SIDEWAYS = `(() => {
  const found = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) found.push('the page (' + root.scrollWidth + ' px in ' + root.clientWidth + ')');
  for (const element of document.querySelectorAll('body *')) {
    if (element.closest('iframe, pre, code') || !element.offsetParent) continue;
    const style = getComputedStyle(element);
    if (!/(auto|scroll)/.test(style.overflowX) || style.textOverflow === 'ellipsis') continue;
    if (element.scrollWidth > element.clientWidth + 1) {
      const what = element.getAttribute('aria-label') || String(element.className).split(' ').pop() || element.tagName;
      found.push(what + ': ' + element.scrollWidth + ' px in ' + element.clientWidth + ' (' + (element.innerText || '').slice(0, 40).replace(/\\s+/g, ' ') + ')');
    }
  }
  return found;
})()`;

/** Whether the text of the first element matching `selector` is cut (wider than its box, as with an ellipsis); false when there is none. */
export function truncated(page: Page, selector: string): Promise<boolean> {
  return page.evaluate<boolean>(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    return Boolean(element) && element.scrollWidth > element.clientWidth + 1;
  })()`);
}

/** Writes test/browser/screenshots/<name>-<viewport>.png (the whole page) and returns its path. */
export async function screenshot(page: Page, name: string, viewport: ViewportName): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}-${viewport}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * The page at both widths: a screenshot of each and axe's serious/critical violations of each,
 * keyed `<viewport>`. `open` loads and settles the page in a fresh context of that width.
 */
export async function atBothWidths(
  browser: Browser,
  baseURL: string,
  name: string,
  open: (page: Page) => Promise<void>,
): Promise<Record<ViewportName, AxeViolation[]>> {
  const found = {} as Record<ViewportName, AxeViolation[]>;
  for (const viewport of Object.keys(VIEWPORTS) as ViewportName[]) {
    const context = await newContext(browser, viewport, baseURL);
    try {
      const page = await context.newPage();
      await open(page);
      await screenshot(page, name, viewport);
      found[viewport] = await seriousViolations(page);
    } finally {
      await context.close();
    }
  }
  return found;
}

function newestModification(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestModification(join(path, entry))));
}

/**
 * Builds the dashboard (apps/dashboard/build.mjs, as `npm run build` does) when dist/dashboard is
 * missing or older than its sources, so a suite run on its own serves the current SPA.
 */
export function ensureDashboardBuilt(): void {
  const index = join(ROOT, 'dist', 'dashboard', 'index.html');
  let built = 0;
  try {
    built = statSync(index).mtimeMs;
  } catch {
    built = 0;
  }
  if (built > newestModification(join(ROOT, 'apps', 'dashboard'))) return;
  execFileSync(process.execPath, [join(ROOT, 'apps', 'dashboard', 'build.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
