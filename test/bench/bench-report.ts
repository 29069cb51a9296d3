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
  stream: string;
  messagesOnStream: number;
  non2xx: number;
  errors: number;
}

export interface BenchReport {
  date: string;
  machine: { cpu: string; cpus: number; node: string; postgres: string; synchronousCommit: string; nats: string };
  api: { workers: number; command: string };
  bare: LoadFigures;
  single: LoadFigures;
  batch: LoadFigures & { batchSize: number };
  ratio: number;
  durability: Durability;
  targets: typeof TARGETS & { singleMet: boolean; batchMet: boolean };
}

const n = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pad = (s: string, width: number) => (s.length >= width ? s : ' '.repeat(width - s.length) + s);
const failures = (f: LoadFigures) => {
  const statuses = Object.entries(f.non2xx).map(([status, count]) => `${count}×${status}`);
  if (f.errors) statuses.push(`${f.errors} socket errors`);
  if (f.timeouts) statuses.push(`${f.timeouts} timeouts`);
  return statuses.join(', ') || '0';
};

export function printReport(r: BenchReport): void {
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`  ${cells[0].padEnd(34)}${cells.slice(1).map((c, i) => pad(c, [9, 11, 8, 8, 9][i] ?? 10)).join('')}   ${cells.length > 6 ? '' : ''}`);
  lines.push('');
  lines.push(`Herald API bench, ${r.date}`);
  lines.push(`  machine: ${r.machine.cpus} × ${r.machine.cpu}, Node ${r.machine.node}; load generator, API, Postgres, Redis and NATS share it`);
  lines.push(`  Postgres ${r.machine.postgres} (synchronous_commit=${r.machine.synchronousCommit}), NATS ${r.machine.nats} (JetStream file store, R1)`);
  lines.push(`  API: ${r.api.command}`);
  lines.push('');
  row(['', 'req/s', 'emails/s', 'p50 ms', 'p99 ms', 'max ms']);
  for (const f of [r.bare, r.single, r.batch]) {
    row([
      `${f.name} (${f.connections} conn)`,
      n(f.requestsPerSecond),
      f.emailsPerSecond ? n(f.emailsPerSecond) : '-',
      n(f.latencyMs.p50),
      n(f.latencyMs.p99),
      n(f.latencyMs.max),
    ]);
  }
  lines.push('');
  lines.push(`  Herald single-send req/s ÷ bare Fastify req/s: ${n(r.ratio, 3)} (bare Fastify is ${n(1 / r.ratio, 1)}× faster)`);
  lines.push('');
  const t = r.targets;
  lines.push(
    `  target POST /emails:       ≥ ${n(t.singleEmailsPerSecond)} emails/s with p99 < ${t.singleP99Ms} ms  ->  ` +
      `${n(r.single.emailsPerSecond)}/s, p99 ${n(r.single.latencyMs.p99)} ms: ${t.singleMet ? 'MET' : 'MISSED'}`,
  );
  lines.push(
    `  target POST /emails/batch: ≥ ${n(t.batchEmailsPerSecond)} emails/s                  ->  ` +
      `${n(r.batch.emailsPerSecond)}/s: ${t.batchMet ? 'MET' : 'MISSED'}`,
  );
  lines.push('');
  const d = r.durability;
  const allFound = d.acceptedIdsInPostgres === d.distinctAcceptedIds && d.distinctAcceptedIds === d.acceptedEmails;
  lines.push(`  durability (all phases, warm-ups included; counted after the API drained and stopped):`);
  lines.push(`    emails accepted with a 2xx:          ${pad(n(d.acceptedEmails), 10)}`);
  lines.push(`    of their ids, committed in Postgres: ${pad(n(d.acceptedIdsInPostgres), 10)}  ${allFound ? 'OK: every accepted email is committed' : 'LOST EMAILS'}`);
  lines.push(`    rows in the emails table:            ${pad(n(d.rowsInPostgres), 10)}  (more than accepted = requests cut off by the load generator's stop)`);
  lines.push(
    `    messages on ${d.stream}: ${pad(n(d.messagesOnStream), Math.max(1, 24 - d.stream.length) + 10)}  ` +
      `${d.messagesOnStream >= d.acceptedEmails && d.messagesOnStream === d.rowsInPostgres ? 'OK: every committed email is published' : 'MISMATCH'}`,
  );
  lines.push(`    non-2xx responses: ${n(d.non2xx)}, socket errors/timeouts: ${n(d.errors)}`);
  lines.push(`  failures per phase: ${[r.bare, r.single, r.batch].map((f) => `${f.name}: ${failures(f)}`).join('; ')}`);
  lines.push('');
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
