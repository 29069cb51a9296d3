import type { LoadFigures } from './bench-load';
import { failures, n, right } from './bench-report';

// The report of the regions benchmark (regions-bench.ts): its table, its targets and what became
// of every accepted email.

export interface Phase {
  name: string;
  /** The delay each way between the regions while it ran (ms). */
  delayMs: number;
  figures: LoadFigures;
}

/** What became of one region's accepted emails. */
export interface Durability {
  /** Emails answered 2xx (every phase, warm-ups included), and how many distinct ids. */
  accepted: number;
  distinct: number;
  /** Of those, rows of the region's emails table. */
  committed: number;
  /** Rows of the region's emails table (the bench's alone). */
  rows: number;
  stream: string;
  /** Messages on the region's send stream. */
  messages: number;
}

export interface RegionsReport {
  date: string;
  /** A (where the API runs) and B. */
  regions: { a: string; b: string };
  machine: Record<string, unknown>;
  /** The share of the CPU busy before the bench, or null where it cannot be read. */
  background: number | null;
  delayMs: number;
  databaseB: string;
  /** Phases 1, 2, 3, 4, 5a, 5b, 6, 6B, 7, 7k, 5b' and 5a', in that order. */
  phases: Phase[];
  durability: Record<string, Durability>;
}

/** Prints the report; answers its targets, and whether every accepted email is where it should be. */
export function printRegionsReport({ date, regions: { a, b }, machine, background, delayMs, databaseB, phases, durability }: RegionsReport): {
  targets: { delayedWithin10Percent: boolean; batchWithBDownNotLower: boolean };
  ok: boolean;
} {
  const failed = phases.reduce(
    (sum, p) => sum + Object.values(p.figures.non2xx).reduce((a, b) => a + b, 0) + p.figures.errors + p.figures.timeouts,
    0,
  );

  const [baseline, delayed, keyed, remote, batchUp1, batchDown1, mixedA, , , , batchDown2, batchUp2] = phases.map((p) => p.figures);
  const mean = (x: LoadFigures, y: LoadFigures) => (x.emailsPerSecond + y.emailsPerSecond) / 2;
  const [batchUp, batchDown] = [{ emailsPerSecond: mean(batchUp1, batchUp2) }, { emailsPerSecond: mean(batchDown1, batchDown2) }];
  const within = (f: LoadFigures, base: LoadFigures, k: 'p50' | 'p99') => f.latencyMs[k] <= base.latencyMs[k] * 1.1;
  const targets = {
    delayedWithin10Percent: within(delayed, baseline, 'p50') && within(delayed, baseline, 'p99'),
    batchWithBDownNotLower: batchDown.emailsPerSecond >= batchUp.emailsPerSecond,
  };

  const lines: string[] = [''];
  const out = (line = '') => lines.push(line);
  out(`Herald regions bench (issue 15), ${date}`);
  out(`  machine: ${machine.cpus} × ${machine.cpu}, Node ${machine.node}; the load generator, the API, Postgres, Redis and NATS all share it`);
  out(`  Postgres ${machine.postgres} (synchronous_commit=${machine.synchronousCommit}), NATS ${machine.nats} (supercluster, 1 node per region, R1)`);
  if (background !== null) {
    out(
      `  machine busy before the bench: ${n(background * 100)}%${background > 0.15 ? '  WARNING: other work is running; figures are low and noisy' : ''}`,
    );
  }
  out(`  API: node bin/herald.js api (1 process) in A = ${a}; B = ${b}, ${delayMs} ms away each way (NATS gateways, B's database link)`);
  out(`  A's email plane, the control plane and Redis: direct; B's email plane: database ${databaseB} through a delay proxy`);
  out();
  out(
    `  ${''.padEnd(54)}${right('delay', 6)}${right('req/s', 8)}${right('emails/s', 9)}${right('p50', 7)}${right('p90', 7)}${right('p99', 7)}${right('max', 7)}${right('API µs/', 8)}`,
  );
  out(
    `  ${''.padEnd(54)}${right('ms', 6)}${''.padEnd(17)}${right('ms', 7)}${right('ms', 7)}${right('ms', 7)}${right('ms', 7)}${right('email', 8)}  non-2xx / errors`,
  );
  for (const p of phases) out(row(p));
  out();
  const ms = (v: number) => `${n(v)} ms`;
  const signed = (v: number) => `${v < 0 ? '−' : '+'}${ms(Math.abs(v))}`;
  const ratio = (a: number, b: number) => (b > 0 ? `×${n(a / b, 2)}` : '-');
  out(
    `  target 2 within 10% of 1 (no cross-region round trip): p50 ${ms(delayed.latencyMs.p50)} vs ${ms(baseline.latencyMs.p50)} (${ratio(delayed.latencyMs.p50, baseline.latencyMs.p50)}), ` +
      `p99 ${ms(delayed.latencyMs.p99)} vs ${ms(baseline.latencyMs.p99)} (${ratio(delayed.latencyMs.p99, baseline.latencyMs.p99)})  ${targets.delayedWithin10Percent ? 'MET' : 'MISSED'}`,
  );
  out(
    `  3, an Idempotency-Key (printed; one round trip = ${2 * delayMs} ms): p50 ${signed(keyed.latencyMs.p50 - delayed.latencyMs.p50)}, ` +
      `p99 ${signed(keyed.latencyMs.p99 - delayed.latencyMs.p99)} over 2`,
  );
  out(`  4, a B domain (printed; expected ≥ ${2 * delayMs} ms): p50 ${ms(remote.latencyMs.p50)}, p99 ${ms(remote.latencyMs.p99)}`);
  out(
    `  target 5b ≥ 5a (batch at A unaffected by B down; means of 5b, 5b' and of 5a, 5a'): ${n(batchDown.emailsPerSecond)} vs ${n(batchUp.emailsPerSecond)} emails/s ` +
      `(${ratio(batchDown.emailsPerSecond, batchUp.emailsPerSecond)})  ${targets.batchWithBDownNotLower ? 'MET' : 'MISSED'}`,
  );
  out(
    `  6, an A domain while a B domain sends (printed; 2 had it alone): p50 ${ms(mixedA.latencyMs.p50)}, p99 ${ms(mixedA.latencyMs.p99)} ` +
      `(${ratio(mixedA.latencyMs.p50, delayed.latencyMs.p50)}, ${ratio(mixedA.latencyMs.p99, delayed.latencyMs.p99)} of 2)`,
  );
  out();
  out('  durability, over every phase including warm-ups:');
  let ok = failed === 0;
  for (const [region, d] of Object.entries(durability)) {
    const good = d.committed === d.accepted && d.distinct === d.accepted && d.messages >= d.committed;
    ok &&= good;
    out(
      `    ${region}: ${n(d.accepted)} answered 2xx, ${n(d.committed)} of them in its database (${n(d.rows)} rows), ` +
        `${n(d.messages)} messages on ${d.stream}  ${good ? 'OK' : 'NOT OK'}`,
    );
  }
  out(`    non-2xx responses, socket errors and timeouts: ${n(failed)}`);
  out();
  process.stdout.write(`${lines.join('\n')}\n`);
  return { targets, ok };
}

function row(p: Phase): string {
  const f = p.figures;
  const cpuPerEmail = f.cpu && f.emailsPerSecond ? right(n((f.cpu.server * 1e6) / (f.emailsPerSecond * f.seconds)), 8) : right('-', 8);
  return (
    `  ${`${p.name} (${f.connections} conn)`.padEnd(54)}${right(`${p.delayMs}`, 6)}${right(n(f.requestsPerSecond), 8)}` +
    `${right(n(f.emailsPerSecond), 9)}${right(n(f.latencyMs.p50), 7)}${right(n(f.latencyMs.p90), 7)}${right(n(f.latencyMs.p99), 7)}` +
    `${right(n(f.latencyMs.max), 7)}${cpuPerEmail}  ${failures(f)}`
  );
}
