// Compares two builds from the printed output of repeated bench runs (`node dist/test/bench/compare-runs.js
// BEFORE_DIR AFTER_DIR`): each directory holds one text file per run of the same bench, as it printed.
// Every figure of every table (a row label, a column) is read from every run; for each the tool
// prints the mean and standard deviation of both builds, the change of the mean, and Welch's t. A
// change is flagged `worse` only when it is beyond the threshold (--threshold %, 5 by default) and
// beyond the noise (|t| ≥ 2); `within noise` when the means differ by more than the threshold but
// the runs disagree too much to say so (|t| < 2). Which direction is worse comes from the column:
// latencies, CPU µs and `max` are better low; rates are better high.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type Figures = Map<string, number>;

/** Reads the tables of one printed run: a header line of column names, then rows of a label and numbers. */
export function figuresOf(text: string): Figures {
  const figures: Figures = new Map();
  let columns: string[] = [];
  let table = '';
  for (const line of text.split('\n')) {
    const row = /^\s{2}(\S.*?\S)\s{2,}((?:-|[\d,.]+%?)(?:\s+(?:-|[\d,.]+%?))*)(?:\s+[a-z].*)?$/.exec(line);
    if (row && columns.length) {
      const values = row[2].split(/\s+/);
      // Trailing columns may hold words ("none"), which are not figures.
      if (values.length <= columns.length) {
        values.forEach((v, i) => v !== '-' && figures.set(`${table} | ${row[1]} | ${columns[i]}`, Number(v.replace(/[,%]/g, ''))));
      }
      continue;
    }
    // A header: deeply indented column names, no label of its own.
    if (/^\s{10,}[a-z]/i.test(line) && !line.includes(':')) {
      table = /\bpostgres\b|\bserver\b/.test(line) ? 'cpu' : 'rates';
      // The CPU header's names hold single spaces between them ("bench postgres"): split by words.
      columns = table === 'cpu' ? line.trim().split(/\s+/) : line.trim().split(/\s{2,}/);
    }
  }
  return figures;
}

/** Figures that are not the bench's own work (noise on a shared machine, or what was left idle). */
const notJudged = (name: string): boolean => /\| (other|idle)$/.test(name);

/** Latencies, CPU µs per email and maxima are better low; rates and capacity are better high. */
const lowerIsBetter = (name: string): boolean => / ms$|\| max/.test(name) || (name.startsWith('cpu') && !name.endsWith('| capacity'));

function stats(values: number[]): { mean: number; sd: number; n: number } {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd, n };
}

function runsIn(dir: string): Figures[] {
  return readdirSync(dir)
    .filter((f) => !f.startsWith('.'))
    .sort()
    .map((f) => figuresOf(readFileSync(join(dir, f), 'utf8')));
}

function main(): number {
  const args = process.argv.slice(2);
  const at = args.indexOf('--threshold');
  const threshold = at >= 0 ? Number(args.splice(at, 2)[1]) : 5;
  const [beforeDir, afterDir] = args;
  if (!beforeDir || !afterDir) {
    process.stderr.write('usage: compare-runs BEFORE_DIR AFTER_DIR [--threshold PERCENT]\n');
    return 2;
  }
  const before = runsIn(beforeDir);
  const after = runsIn(afterDir);
  const names = [...new Set(before.flatMap((f) => [...f.keys()]))].filter((k) => after.some((f) => f.has(k)));
  const pad = Math.max(...names.map((n) => n.length));
  process.stdout.write(
    `${before.length} runs before (${beforeDir}), ${after.length} after (${afterDir}); worse = beyond ${threshold}% and |t| ≥ 2\n\n`,
  );
  process.stdout.write(`${'figure'.padEnd(pad)}  ${'before mean ± sd'.padStart(20)}  ${'after mean ± sd'.padStart(20)}  change      t  verdict\n`);
  let worse = 0;
  for (const name of names) {
    const b = stats(before.flatMap((f) => (f.has(name) ? [f.get(name)!] : [])));
    const a = stats(after.flatMap((f) => (f.has(name) ? [f.get(name)!] : [])));
    if (b.mean === 0) continue;
    const change = ((a.mean - b.mean) / b.mean) * 100;
    const se = Math.sqrt(b.sd ** 2 / b.n + a.sd ** 2 / a.n);
    const t = se === 0 ? 0 : (a.mean - b.mean) / se;
    const badDirection = lowerIsBetter(name) ? change > 0 : change < 0;
    const verdict = notJudged(name)
      ? '(not judged)'
      : !badDirection || Math.abs(change) <= threshold
        ? ''
        : Math.abs(t) >= 2
          ? 'WORSE'
          : 'within noise';
    if (verdict === 'WORSE') worse++;
    const cell = (s: { mean: number; sd: number }) => `${s.mean.toFixed(1)} ± ${s.sd.toFixed(1)}`.padStart(20);
    process.stdout.write(
      `${name.padEnd(pad)}  ${cell(b)}  ${cell(a)}  ${`${change >= 0 ? '+' : ''}${change.toFixed(1)}%`.padStart(7)}  ${t.toFixed(1).padStart(5)}  ${verdict}\n`,
    );
  }
  process.stdout.write(`\n${worse} figure(s) worse beyond ${threshold}% and beyond the noise\n`);
  return 0;
}

if (require.main === module) process.exit(main());
