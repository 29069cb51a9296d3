// `npm run build` builds the dashboard with this script: Vite into dist/dashboard, then prints the
// initial JavaScript (what index.html loads before any page chunk) gzipped, against the 300 KB budget.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import config from './vite.config.mjs';

const BUDGET_KB = 300;
// A production React build whatever NODE_ENV the caller has (jest sets it to test).
process.env.NODE_ENV = 'production';
const started = Date.now();
await build({ ...config, configFile: false });
const outDir = config.build.outDir;
const html = readFileSync(join(outDir, 'index.html'), 'utf8');
const initial = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/dashboard\/([^"]+\.js)"/g)].map((m) => m[1]);
const gzipped = initial.reduce((sum, file) => sum + gzipSync(readFileSync(join(outDir, file))).length, 0);
const kb = (gzipped / 1024).toFixed(1);
console.log(`dashboard: built in ${Date.now() - started} ms; initial JavaScript ${kb} KB gzipped (${initial.length} files, budget ${BUDGET_KB} KB)`);
if (gzipped > BUDGET_KB * 1024) {
  console.error(`dashboard: the initial JavaScript is over its ${BUDGET_KB} KB budget`);
  process.exit(1);
}
