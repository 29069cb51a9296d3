#!/usr/bin/env node
// `npm audit` of the production dependencies, run by `npm test` (and so by CI, .ci/run): fails on
// any high or critical advisory that deploy/local/audit-allowlist.json does not list with a
// reason. When the advisory service cannot be asked (offline, a registry mirror without the
// audit endpoint, a timeout), it says it could not check and does not fail: an outage of the
// registry is not a fault of the code under test.
//
//   HERALD_AUDIT_COMMAND    the command to run instead of `npm audit --omit=dev --json` (tests)
//   HERALD_AUDIT_ALLOWLIST  another allow-list file (tests)
//   HERALD_AUDIT_TIMEOUT_MS how long to wait for the audit (60 s)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ALLOWLIST = process.env.HERALD_AUDIT_ALLOWLIST || join(ROOT, 'deploy', 'local', 'audit-allowlist.json');
const COMMAND = process.env.HERALD_AUDIT_COMMAND || 'npm audit --omit=dev --json';
const TIMEOUT_MS = Number(process.env.HERALD_AUDIT_TIMEOUT_MS || 60_000);
const FAILING = new Set(['high', 'critical']);

const say = (line) => process.stderr.write(`audit: ${line}\n`);

/** The allow-list: `{ "advisories": [{ "id": "GHSA-…", "package": "…", "reason": "…", "reviewed": "YYYY-MM-DD" }] }`. */
function allowList() {
  let parsed;
  try {
    parsed = JSON.parse(readFileSync(ALLOWLIST, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the allow-list ${relative(ROOT, ALLOWLIST)}: ${error.message}`);
  }
  const entries = Array.isArray(parsed?.advisories) ? parsed.advisories : null;
  if (!entries) throw new Error(`${relative(ROOT, ALLOWLIST)} must hold { "advisories": [...] }`);
  for (const [i, entry] of entries.entries()) {
    if (typeof entry?.id !== 'string' || !/^GHSA(-[23456789cfghjmpqrvwx]{4}){3}$/.test(entry.id)) {
      throw new Error(`${relative(ROOT, ALLOWLIST)}: advisories[${i}].id must be a GHSA id (GHSA-xxxx-xxxx-xxxx)`);
    }
    if (typeof entry.reason !== 'string' || entry.reason.trim().length < 20) {
      throw new Error(`${relative(ROOT, ALLOWLIST)}: ${entry.id} needs a reason (why it cannot reach Herald, or what waits for a fix)`);
    }
  }
  return new Map(entries.map((entry) => [entry.id, entry]));
}

/** Runs the audit command; its stdout, or null when it did not finish in time. */
function runAudit() {
  return new Promise((resolve) => {
    const child = spawn(COMMAND, { cwd: ROOT, shell: true, stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
      resolve(null);
    }, TIMEOUT_MS);
    child.on('error', () => {
      clearTimeout(timer);
      resolve('');
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/** Each advisory of an npm audit (v2) report once: `via` entries that are objects are advisories. */
function advisories(report) {
  const found = new Map();
  for (const [name, vulnerability] of Object.entries(report.vulnerabilities ?? {})) {
    for (const via of vulnerability.via ?? []) {
      if (typeof via !== 'object' || via === null) continue;
      const id = String(via.url ?? '').match(/GHSA(-[a-z0-9]{4}){3}/i)?.[0] ?? `npm-${via.source}`;
      if (!found.has(id))
        found.set(id, { id, package: via.name ?? name, severity: via.severity, title: via.title, range: via.range, fix: vulnerability.fixAvailable });
    }
  }
  return [...found.values()];
}

async function main() {
  const allowed = allowList();
  const out = await runAudit();
  if (out === null) {
    say(`could not check: no answer from \`${COMMAND}\` within ${TIMEOUT_MS} ms (registry unreachable?); not failing`);
    return 0;
  }
  let report;
  try {
    report = JSON.parse(out);
  } catch {
    say(`could not check: \`${COMMAND}\` printed no JSON report; not failing`);
    return 0;
  }
  if (!report || typeof report.vulnerabilities !== 'object') {
    const reason = String(report?.message ?? report?.error?.summary ?? 'no report').split('\n')[0];
    say(`could not check the production dependencies: ${reason}; not failing`);
    return 0;
  }
  const found = advisories(report);
  const failing = found.filter((a) => FAILING.has(a.severity) && !allowed.has(a.id));
  const accepted = found.filter((a) => FAILING.has(a.severity) && allowed.has(a.id));
  const lower = found.filter((a) => !FAILING.has(a.severity));
  const stale = [...allowed.keys()].filter((id) => !found.some((a) => a.id === id));
  for (const a of accepted) say(`allowed ${a.severity} ${a.id} in ${a.package}: ${allowed.get(a.id).reason}`);
  for (const id of stale) say(`${id} is in the allow-list but no longer reported: remove it`);
  if (lower.length > 0) say(`${lower.length} advisories below high (npm audit --omit=dev lists them)`);
  if (failing.length === 0) {
    say(`no high or critical advisory outside the allow-list (${found.length} advisories in all)`);
    return 0;
  }
  for (const a of failing) {
    say(
      `${a.severity.toUpperCase()} ${a.id} in ${a.package}${a.range ? ` ${a.range}` : ''}: ${a.title}${a.fix ? ' (a fix is available: npm audit fix)' : ''}`,
    );
  }
  say(
    `${failing.length} high or critical advisories in the production dependencies; fix them, or list each in ${relative(ROOT, ALLOWLIST)} with the reason it cannot reach Herald`,
  );
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    say(error.message);
    process.exit(2);
  },
);
