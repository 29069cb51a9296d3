// Sums Postgres' statement log by statement: where a bench's Postgres time goes, and which
// statements are parsed and planned at every run because they are sent by text rather than
// prepared (NamedStatement). Usage, on this machine's shared server (nothing else running):
//
//   L=/var/log/postgresql/postgresql-15-main.log; from=$(wc -l < $L)
//   psql -h 127.0.0.1 -U postgres -c "ALTER SYSTEM SET log_min_duration_statement = 0" -c "SELECT pg_reload_conf()"
//   node dist/test/bench/<bench>.js --no-save ...
//   psql -h 127.0.0.1 -U postgres -c "ALTER SYSTEM RESET log_min_duration_statement" -c "SELECT pg_reload_conf()"
//   tail -n +$from $L > /tmp/statements.log
//   node dist/test/bench/statement-log.js /tmp/statements.log [--top N]
//
// Each row: runs, total ms, mean µs, the phase (parse, bind, execute; `statement` for the simple
// protocol, BEGIN and COMMIT included), whether it was prepared under a name (`named`) or sent by
// text (`text`: parsed at each run, and planned at each bind), and the statement's first 110
// characters. Durations are the server's wall time of each phase: a COMMIT's is mostly its WAL
// flush, not CPU.
import { readFileSync } from 'node:fs';

export interface StatementTotal {
  phase: string;
  named: boolean;
  statement: string;
  runs: number;
  totalMs: number;
}

const ENTRY_START = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/;
const DURATION = /duration: ([\d.]+) ms\s+(statement|parse|bind|execute)( [^:]*)?:\s*(.*)$/s;

/** The log's durations summed per phase, preparedness and statement text, largest total first. */
export function statementTotals(log: string, width = 110): StatementTotal[] {
  const entries: string[] = [];
  for (const line of log.split('\n')) {
    if (ENTRY_START.test(line) || !entries.length) entries.push(line);
    else entries[entries.length - 1] += ` ${line.trim()}`;
  }
  const totals = new Map<string, StatementTotal>();
  for (const entry of entries) {
    const match = DURATION.exec(entry);
    if (!match) continue;
    const [, ms, phase, name, text] = match;
    const named = phase !== 'statement' && !!name && name.trim() !== '<unnamed>';
    const statement = text!.replace(/\s+/g, ' ').trim().slice(0, width);
    const key = `${phase}\0${named}\0${statement}`;
    const total = totals.get(key) ?? { phase: phase!, named, statement, runs: 0, totalMs: 0 };
    total.runs++;
    total.totalMs += Number(ms);
    totals.set(key, total);
  }
  return [...totals.values()].sort((a, b) => b.totalMs - a.totalMs);
}

function main(): void {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 30;
  if (!args.length || !Number.isInteger(top) || top <= 0) {
    console.error('usage: statement-log.js LOG... [--top N]');
    process.exit(2);
  }
  const totals = statementTotals(args.map((file) => readFileSync(file, 'utf8')).join('\n'));
  const all = totals.reduce((sum, t) => sum + t.totalMs, 0);
  const byPhase = (named: boolean, phases: string[]) =>
    totals.filter((t) => t.named === named && phases.includes(t.phase)).reduce((sum, t) => sum + t.totalMs, 0);
  console.log(`${totals.reduce((n, t) => n + t.runs, 0)} logged phases, ${all.toFixed(1)} ms in all`);
  console.log(
    `  sent by text: parse and bind ${byPhase(false, ['parse', 'bind']).toFixed(1)} ms, execute ${byPhase(false, ['execute']).toFixed(1)} ms;` +
      ` prepared: parse and bind ${byPhase(true, ['parse', 'bind']).toFixed(1)} ms, execute ${byPhase(true, ['execute']).toFixed(1)} ms`,
  );
  console.log(`\n     runs   total ms   mean µs  phase     how    statement`);
  for (const t of totals.slice(0, top)) {
    const mean = ((t.totalMs / t.runs) * 1000).toFixed(0);
    console.log(
      `  ${String(t.runs).padStart(7)} ${t.totalMs.toFixed(1).padStart(10)} ${mean.padStart(9)}  ${t.phase.padEnd(9)} ${(t.named ? 'named' : 'text').padEnd(6)} ${t.statement}`,
    );
  }
}

if (require.main === module) main();
