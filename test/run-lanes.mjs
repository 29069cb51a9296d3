#!/usr/bin/env node
// Runs the whole jest suite in two lanes at once, each lane one suite at a time:
//   system: the suites that run Herald as child processes against private servers, MX sinks and
//           a browser (faults, browser, delivery, regions, outbox; the lighter browser suites
//           excepted, see REST_BROWSER); never two of them together, so each keeps most of a core;
//   rest:   every other suite (unit, integration, the API, SMTP, webhooks and dashboard suites).
// On a two-core machine this halves the wall time of a serial run without letting two heavy
// suites compete. Each lane gets its own jest cache. The rest lane prints as it runs; the system
// lane's output follows when both are done, then each lane's failures and totals, so the end of
// the log says everything. Any arguments go to a single plain jest run instead (`npm test -- test/api`).
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
// Browser suites run Herald inside the jest process beside one Chromium. The lighter ones run in
// the rest lane so that the two lanes end together: with every browser suite in it, the system
// lane took 1,433 s against the rest lane's 990 s (clean-clone CI, 2026-11-27).
const REST_BROWSER = '(dashboard-(sign-up|contacts|metrics|social|passkeys)|email-insights)\\.';
const SYSTEM = `/test/(faults|delivery|regions|outbox|browser/(?!${REST_BROWSER}))`;

const args = process.argv.slice(2);
if (args.length > 0) {
  const child = spawn(process.execPath, [JEST, ...args], { stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  const dir = join(tmpdir(), `herald-lanes-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const lanes = [
    { name: 'system', args: ['--testPathPatterns', SYSTEM], live: false },
    { name: 'rest', args: ['--testPathIgnorePatterns', '/node_modules/', SYSTEM], live: true },
  ];
  const started = Date.now();
  const cpuBefore = cpuTimes();
  const results = await Promise.all(lanes.map((lane) => run(lane, dir)));
  const cpuAfter = cpuTimes();
  for (const result of results.filter((r) => !r.lane.live)) {
    process.stdout.write(`\n===== lane ${result.lane.name}: full output =====\n${readFileSync(result.log, 'utf8')}`);
  }
  process.stdout.write(`\n===== lanes done in ${Math.round((Date.now() - started) / 1000)} s; ${busy(cpuBefore, cpuAfter)} =====\n`);
  for (const result of results) process.stdout.write(slowest(result));
  for (const result of results) {
    const output = readFileSync(result.log, 'utf8');
    const failures = output.indexOf('Summary of all failing tests');
    const totals = output.lastIndexOf('Test Suites:');
    const tail = failures >= 0 ? output.slice(failures) : totals >= 0 ? output.slice(totals) : output.slice(-4000);
    process.stdout.write(`\n----- lane ${result.lane.name}: exit ${result.code} -----\n${tail}`);
  }
  process.exit(results.every((r) => r.code === 0) ? 0 : 1);
}

/** The machine's CPU counters (/proc/stat, in clock ticks): busy and idle, summed over cores; null off Linux. */
function cpuTimes() {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
    return { busy: user + nice + system + irq + softirq + steal, idle: idle + iowait };
  } catch {
    return null;
  }
}

/** How busy the cores were between two readings: whether the lanes left CPU unused. */
function busy(before, after) {
  if (!before || !after) return 'CPU use unknown';
  const used = after.busy - before.busy;
  const total = used + after.idle - before.idle;
  return `CPU busy ${Math.round((100 * used) / total)}% of ${cpus().length} cores`;
}

/** The lane's slowest suites, so a log says where the suite's time goes. */
function slowest(result, count = 15) {
  let report;
  try {
    report = JSON.parse(readFileSync(join(dirname(result.log), `${result.lane.name}.json`), 'utf8'));
  } catch {
    return `\n----- lane ${result.lane.name}: no timing report -----\n`;
  }
  const suites = report.testResults
    .map((r) => ({ file: relative(ROOT, r.name), seconds: (r.endTime - r.startTime) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds);
  const total = suites.reduce((sum, s) => sum + s.seconds, 0);
  const rows = suites.slice(0, count).map((s) => `${s.seconds.toFixed(1).padStart(8)} s  ${s.file}`);
  return `\n----- lane ${result.lane.name}: ${suites.length} suites, ${Math.round(total)} s; the slowest -----\n${rows.join('\n')}\n`;
}

function run(lane, dir) {
  const log = join(dir, `${lane.name}.log`);
  const file = createWriteStream(log);
  // --forceExit: a lane whose suites left a handle open (seen once in the rest lane, after a run
  // with failures; not found yet) would otherwise hold CI until its 90-minute limit.
  // One worker process per lane, replaced after a suite that leaves it over 1.5 GB: run in band,
  // the rest lane's single process grew past Node's 4 GB heap over 200 suites (leaks between
  // suites that are not all found) and died with "heap out of memory".
  const memory = ['--maxWorkers=1', '--workerIdleMemoryLimit=1536MB'];
  const report = ['--json', '--outputFile', join(dir, `${lane.name}.json`)];
  const child = spawn(
    process.execPath,
    [JEST, '--forceExit', ...memory, ...report, '--cacheDirectory', join(dir, `cache-${lane.name}`), ...lane.args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0' },
    },
  );
  for (const stream of [child.stdout, child.stderr]) {
    stream.pipe(file, { end: false });
    if (lane.live) stream.pipe(process.stdout, { end: false });
  }
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      file.end(() => resolve({ lane, log, code: code ?? (signal ? 1 : 0) }));
    });
  });
}
