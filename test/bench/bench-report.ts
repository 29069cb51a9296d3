import type { ResidentMemory } from './process-memory';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST } from './aliases';
import { LoadFigures } from './bench-load';

/** The issue's targets ("Foundation"), from research/perf-reliability.md §5 on 2 vCPU. */
export const TARGETS = { singleEmailsPerSecond: 2_000, singleP99Ms: 50, batchEmailsPerSecond: 20_000 };

export interface Durability {
  acceptedEmails: number;
  distinctAcceptedIds: number;
  acceptedIdsInPostgres: number;
  rowsInPostgres: number;
  schema: string;
  stream: string;
  messagesOnStream: number;
  non2xx: number;
  errors: number;
}

export interface BenchReport {
  date: string;
  machine: {
    cpu: string;
    cpus: number;
    node: string;
    postgres: string;
    synchronousCommit: string;
    nats: string;
    /** Busy share of the machine in the second before the bench started anything. */
    backgroundLoad: number | null;
  };
  api: { workers: number; command: string };
  bare: LoadFigures;
  single: LoadFigures;
  batch: LoadFigures & { batchSize: number };
  ratio: number;
  durability: Durability;
  /** The API's resident memory (process and cluster workers), from /proc; null elsewhere. */
  memory: (ResidentMemory & { podLimitMiB: number }) | null;
  targets: typeof TARGETS & { singleMet: boolean; batchMet: boolean };
}

/** A figure with thousands separators and `digits` decimals, as the reports print them. */
export const n = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const right = (s: string, width: number) => s.padStart(width);

/** A load's refused requests, by status, and its socket errors and timeouts; `none`. */
export function failures(f: LoadFigures): string {
  const statuses = Object.entries(f.non2xx).map(([status, count]) => `${count}×${status}`);
  if (f.errors) statuses.push(`${f.errors} socket errors`);
  if (f.timeouts) statuses.push(`${f.timeouts} timeouts`);
  return statuses.join(', ') || 'none';
}

/** CPU µs per email (bare Fastify: per request) by who spent it, and the machine's idle share. */
/** One phase's CPU per email (per request when it accepts no emails), by process, with idle share and capacity. */
export function cpuLine(f: LoadFigures): string {
  const c = f.cpu;
  if (!c) return `  ${f.name}: CPU figures need Linux /proc`;
  const units = (f.emailsPerSecond || f.requestsPerSecond) * f.seconds;
  const us = (cpuSeconds: number, width: number) => right(n((cpuSeconds * 1e6) / units), width);
  const total = c.server + c.loadGenerator + c.postgres + c.redis + c.nats + c.other + c.idle;
  return (
    `  ${f.name.padEnd(26)}${us(c.server, 7)}${us(c.loadGenerator, 8)}${us(c.postgres, 9)}${us(c.redis, 6)}` +
    `${us(c.nats, 6)}${us(c.other, 6)}${right(`${n((c.idle / total) * 100)}%`, 6)}${right(c.server > 0 ? n(units / c.server) : '-', 10)}`
  );
}

export function printReport(r: BenchReport): void {
  const lines: string[] = [''];
  const out = (line = '') => lines.push(line);
  const m = r.machine;
  out(`Herald API bench, ${r.date}`);
  out(`  machine: ${m.cpus} × ${m.cpu}, Node ${m.node}; the load generator, the API, Postgres, Redis and NATS all share it`);
  out(`  Postgres ${m.postgres} (synchronous_commit=${m.synchronousCommit}), NATS ${m.nats} (JetStream file store, R1)`);
  if (m.backgroundLoad !== null) {
    const busy = `${n(m.backgroundLoad * 100)}%`;
    out(`  machine busy before the bench: ${busy}${m.backgroundLoad > 0.15 ? '  WARNING: other work is running; figures are low and noisy' : ''}`);
  }
  out(`  API: ${r.api.command}`);
  out();
  out(
    `  ${''.padEnd(34)}${right('req/s', 9)}${right('emails/s', 10)}${right('p50 ms', 8)}${right('p99 ms', 8)}${right('max ms', 8)}  non-2xx / errors`,
  );
  for (const f of [r.bare, r.single, r.batch]) {
    out(
      `  ${`${f.name} (${f.connections} conn)`.padEnd(34)}${right(n(f.requestsPerSecond), 9)}` +
        `${right(f.emailsPerSecond ? n(f.emailsPerSecond) : '-', 10)}${right(n(f.latencyMs.p50), 8)}` +
        `${right(n(f.latencyMs.p99), 8)}${right(n(f.latencyMs.max), 8)}  ${failures(f)}`,
    );
  }
  out();
  out(`  Herald POST /emails req/s ÷ bare Fastify req/s = ${n(r.ratio, 3)} (the bare route answers ${n(1 / r.ratio, 1)}× as many)`);
  out();
  const t = r.targets;
  out(
    `  target POST /emails        ≥ ${n(t.singleEmailsPerSecond)} emails/s, p99 < ${t.singleP99Ms} ms:  ` +
      `${n(r.single.emailsPerSecond)}/s, p99 ${n(r.single.latencyMs.p99)} ms  ${t.singleMet ? 'MET' : 'MISSED'}`,
  );
  out(
    `  target POST /emails/batch  ≥ ${n(t.batchEmailsPerSecond)} emails/s:               ` +
      `${n(r.batch.emailsPerSecond)}/s  ${t.batchMet ? 'MET' : 'MISSED'}`,
  );
  out();
  out('  CPU µs per email (bare Fastify: per request), by process; "other" is work that is not the');
  out("  bench's (noise on a shared machine); capacity = emails (requests) per second per server vCPU:");
  out(
    `  ${''.padEnd(26)}${right('server', 7)}${right('loadgen', 8)}${right('postgres', 9)}${right('redis', 6)}${right('nats', 6)}${right('other', 6)}${right('idle', 6)}${right('capacity', 10)}`,
  );
  for (const f of [r.bare, r.single, r.batch]) out(cpuLine(f));
  out();
  const d = r.durability;
  const committed = d.acceptedIdsInPostgres === d.acceptedEmails && d.distinctAcceptedIds === d.acceptedEmails;
  const published = d.messagesOnStream === d.rowsInPostgres && d.messagesOnStream >= d.acceptedEmails;
  out('  durability, over every phase including warm-ups, counted after the API drained and stopped:');
  out(`    emails answered 2xx                      ${right(n(d.acceptedEmails), 10)}`);
  out(
    `    of their ids, rows in Postgres           ${right(n(d.acceptedIdsInPostgres), 10)}  ${committed ? 'OK, every accepted email is committed' : 'NOT OK: accepted emails are missing'}`,
  );
  out(`    rows in ${`${d.schema}.emails`.padEnd(33)}${right(n(d.rowsInPostgres), 10)}  (the excess: requests cut off when a load run stopped)`);
  out(
    `    messages on ${d.stream.padEnd(28)}${right(n(d.messagesOnStream), 10)}  ${published ? 'OK, every committed email is published' : 'NOT OK: committed emails are not on the stream'}`,
  );
  out(`    non-2xx responses ${n(d.non2xx)}, socket errors and timeouts ${n(d.errors)}`);
  out();
  if (r.memory) {
    const m = r.memory;
    out(
      `  API resident memory: peak ${n(m.peakMiB)} MiB over the run (VmHWM), ${n(m.nowMiB)} MiB at the end; pod limit ${m.podLimitMiB} Mi: ${m.peakMiB < m.podLimitMiB ? 'within' : 'OVER'}`,
    );
    out();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Writes the report to test/bench/results/api-bench-<date>.json and returns the path. */
export function saveReport(r: BenchReport): string {
  const dir = join(DIST, '..', 'test', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `api-bench-${r.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}

/** Writes any bench's results to test/bench/results/<name>-<date>.json and returns the path. */
export function saveResults(name: string, date: string, results: unknown): string {
  const dir = join(DIST, '..', 'test', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}
